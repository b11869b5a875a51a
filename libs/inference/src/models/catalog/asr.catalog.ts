import type { CatalogFile, HubCatalogEntry } from '../model-catalog.types';

// The Hugging Face ONNX layout that transformers.js and the local ASR engine read: encoder, merged
// decoder (one graph with and without the KV cache), and the JSON configs and tokenizer.
const SEQ2SEQ_CONFIG_FILES: readonly CatalogFile[] = [
  { path: 'config.json', sizeBytes: null, sha256: null },
  { path: 'generation_config.json', sizeBytes: null, sha256: null },
  { path: 'preprocessor_config.json', sizeBytes: null, sha256: null },
  { path: 'tokenizer.json', sizeBytes: null, sha256: null },
  { path: 'tokenizer_config.json', sizeBytes: null, sha256: null },
];

const WHISPER_LICENCE = {
  spdx: 'Apache-2.0',
  note:
    "The Hub model card declares Apache-2.0; OpenAI's original Whisper code and weights are MIT " +
    '(https://github.com/openai/whisper/blob/main/LICENSE).',
} as const;

/**
 * Checksums: the Hub pages for these exact files could not be read from here, so every sha256 is
 * null and the pull takes the Hub's published LFS hash (X-Linked-Etag) for the ONNX files and
 * records the small JSON files' hashes on first use.
 */
export const ASR_CATALOG: readonly HubCatalogEntry[] = [
  {
    kind: 'hub',
    name: 'whisper-tiny.en',
    task: 'asr',
    description: 'Whisper tiny.en (39M params, English only): fastest local ASR',
    sampleRate: 16_000,
    licence: { ...WHISPER_LICENCE, url: 'https://huggingface.co/openai/whisper-tiny.en' },
    source: {
      repo: 'onnx-community/whisper-tiny.en',
      revision: 'main',
      revisionNote: 'not pinned: no full commit hash of this repository could be confirmed from here',
    },
    files: [
      { path: 'onnx/encoder_model.onnx', sizeBytes: null, sha256: null },
      { path: 'onnx/decoder_model_merged.onnx', sizeBytes: null, sha256: null },
      ...SEQ2SEQ_CONFIG_FILES,
    ],
    optional: true,
  },
  {
    kind: 'hub',
    name: 'whisper-base.en',
    task: 'asr',
    description: 'Whisper base.en (74M params, English only): the recommended local ASR',
    sampleRate: 16_000,
    licence: { ...WHISPER_LICENCE, url: 'https://huggingface.co/openai/whisper-base.en' },
    // The "Upload folder" commit that added the ONNX files; later commits only touched README.md.
    source: { repo: 'onnx-community/whisper-base.en', revision: 'fd8ac034a560b217176fae5215ca3fe05c9140f3' },
    files: [
      { path: 'onnx/encoder_model.onnx', sizeBytes: null, sha256: null },
      { path: 'onnx/decoder_model_merged.onnx', sizeBytes: null, sha256: null },
      ...SEQ2SEQ_CONFIG_FILES,
    ],
    optional: true,
  },
  {
    kind: 'hub',
    name: 'moonshine-tiny',
    task: 'asr',
    description: 'Moonshine tiny (27M params, English): variable-length input, low latency on short turns',
    sampleRate: 16_000,
    licence: { spdx: 'MIT', url: 'https://huggingface.co/UsefulSensors/moonshine' },
    source: { repo: 'onnx-community/moonshine-tiny-ONNX', revision: '2e9aab599b84ee5aa2b305757e92c656d9ae638f' },
    files: [
      // From the Hub's LFS page for this file, unchanged since the "improved ONNX weights" commit.
      {
        path: 'onnx/encoder_model.onnx',
        sizeBytes: null,
        sha256: 'cbbf580f703b2af2137e0f6d14cd87f31cc67bd858bfd8715403a9489982d1a5',
      },
      { path: 'onnx/decoder_model_merged.onnx', sizeBytes: null, sha256: null },
      ...SEQ2SEQ_CONFIG_FILES,
    ],
    optional: true,
  },
];
