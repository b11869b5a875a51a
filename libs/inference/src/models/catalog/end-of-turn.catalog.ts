import type { HubCatalogEntry } from '../model-catalog.types';

export const END_OF_TURN_CATALOG: readonly HubCatalogEntry[] = [
  {
    kind: 'hub',
    name: 'smart-turn-v3.2',
    task: 'end-of-turn',
    description: 'Smart Turn v3.2 (CPU int8, Whisper-tiny encoder + classifier): ends turns earlier when confident',
    sampleRate: 16_000,
    licence: { spdx: 'BSD-2-Clause', url: 'https://huggingface.co/pipecat-ai/smart-turn-v3' },
    // The "Smart Turn v3.2" commit. Size and sha256 from the Hub's page for the file (the size also
    // from an archival mirror that quotes the same sha256).
    source: { repo: 'pipecat-ai/smart-turn-v3', revision: 'f766f81d3cfdf7737ac64aad813d91bbfd56bf93' },
    files: [
      {
        path: 'smart-turn-v3.2-cpu.onnx',
        sizeBytes: 8_679_182,
        sha256: '2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f',
      },
    ],
    optional: true,
  },
];
