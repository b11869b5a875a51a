import type { HubCatalogEntry } from '../model-catalog.types';

/**
 * Local chat LLMs in the Hugging Face ONNX layout the local LLM engine reads (readLlmModelFolder):
 * config.json, generation_config.json, tokenizer.json, tokenizer_config.json (the chat template)
 * and onnx/model.onnx, a decoder with past_key_values (input_ids, attention_mask, position_ids,
 * past_key_values.{i}.key|value -> logits, present.{i}.key|value).
 *
 * The file list is the one the Hub's tree shows for onnx-community/Qwen2.5-0.5B-Instruct; sizes
 * there are rounded (model.onnx 1.99 GB, model_int8.onnx 512 MB), so none is written down, and every
 * sha256 is taken at pull time (the Hub's LFS hash for the ONNX files, first use for the JSON).
 */
export const LLM_CATALOG: readonly HubCatalogEntry[] = [
  {
    kind: 'hub',
    name: 'qwen2.5-0.5b-instruct',
    task: 'llm',
    description: 'Qwen2.5 0.5B Instruct: a small local chat LLM with tool calling (ChatML); on a CPU pull it with --precision int8',
    licence: { spdx: 'Apache-2.0', url: 'https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct' },
    source: {
      repo: 'onnx-community/Qwen2.5-0.5B-Instruct',
      revision: 'main',
      revisionNote:
        'not pinned: the Hub shows the ONNX upload as commit 516c8d0 and the last commit as cc5cc01 (model-card metadata), ' +
        'but no full commit hash could be confirmed from here',
    },
    files: [
      { path: 'onnx/model.onnx', sizeBytes: null, sha256: null },
      { path: 'config.json', sizeBytes: null, sha256: null },
      { path: 'generation_config.json', sizeBytes: null, sha256: null },
      { path: 'tokenizer.json', sizeBytes: null, sha256: null },
      { path: 'tokenizer_config.json', sizeBytes: null, sha256: null },
    ],
    optional: true,
  },
];
