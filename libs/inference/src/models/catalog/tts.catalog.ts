import type { HubCatalogEntry } from '../model-catalog.types';

export const TTS_CATALOG: readonly HubCatalogEntry[] = [
  {
    kind: 'hub',
    name: 'kokoro-82m-v1.0',
    task: 'tts',
    description: 'Kokoro 82M v1.0 (int8 quantised) with the af_heart voice: natural local neural TTS',
    sampleRate: 24_000,
    licence: {
      spdx: 'Apache-2.0',
      url: 'https://huggingface.co/hexgrad/Kokoro-82M',
      note: 'Kokoro needs phonemes: keep GPL phonemisers (espeak-ng) out of the product.',
    },
    source: { repo: 'onnx-community/Kokoro-82M-v1.0-ONNX', revision: '1939ad2a8e416c0acfeecc08a694d14ef25f2231' },
    files: [
      // The Hub's LFS hash for this quantised graph (the same file is published in
      // onnx-community/Kokoro-82M-ONNX); the voice and JSON files' hashes are taken at pull time.
      {
        path: 'onnx/model_quantized.onnx',
        sizeBytes: null,
        sha256: 'fbae9257e1e05ffc727e951ef9b9c98418e6d79f1c9b6b13bd59f5c9028a1478',
      },
      { path: 'voices/af_heart.bin', sizeBytes: null, sha256: null },
      { path: 'config.json', sizeBytes: null, sha256: null },
      { path: 'tokenizer.json', sizeBytes: null, sha256: null },
      { path: 'tokenizer_config.json', sizeBytes: null, sha256: null },
    ],
    optional: true,
  },
  {
    kind: 'hub',
    name: 'piper-en_US-lessac-medium',
    task: 'tts',
    description: 'Piper (VITS) en_US lessac, medium quality: small, fast local neural TTS',
    sampleRate: 22_050,
    licence: {
      spdx: 'MIT',
      url: 'https://huggingface.co/rhasspy/piper-voices',
      note:
        'The voice collection is MIT; this voice was trained on the Blizzard 2013 Lessac data, whose ' +
        'terms are named in the MODEL_CARD pulled with it: check them before commercial use.',
    },
    // "Add native names" commit; the .onnx file is unchanged since the v1.0 voices were added.
    source: { repo: 'rhasspy/piper-voices', revision: 'c3bf31a7c50ea738281519ca86ba2ee0f50a1882' },
    files: [
      // Size from the repository's voices.json; sha256 from the Hub's LFS page for this file.
      {
        path: 'en/en_US/lessac/medium/en_US-lessac-medium.onnx',
        sizeBytes: 63_201_294,
        sha256: '5efe09e69902187827af646e1a6e9d269dee769f9877d17b16b1b46eeaaf019f',
      },
      { path: 'en/en_US/lessac/medium/en_US-lessac-medium.onnx.json', sizeBytes: 4885, sha256: null },
      { path: 'en/en_US/lessac/medium/MODEL_CARD', sizeBytes: 351, sha256: null },
    ],
    optional: true,
  },
];
