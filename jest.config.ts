import { availableParallelism } from 'node:os';
import type { Config } from 'jest';

// Path aliases mirror tsconfig.json "paths"; keep the two in step.
const moduleNameMapper = {
  '^@switchboard/([a-z-]+)$': '<rootDir>/libs/$1/src',
  '^@switchboard/([a-z-]+)/(.*)$': '<rootDir>/libs/$1/src/$2',
};

// ts-jest in transpile-only mode: type errors are caught by `npm run typecheck`,
// so the test run stays fast on a 2-core machine.
const transform: Config['transform'] = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }],
};

// A node environment that also disables, between test files, the async-context stores a file
// enabled (test/support/node-environment.ts says why).
const common = { rootDir: __dirname, moduleNameMapper, transform, testEnvironment: '<rootDir>/test/support/node-environment.ts' };

// test/docs: checks of the documentation's files (README length, links), which start nothing.
const UNIT_SPECS = ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts', '<rootDir>/test/docs/**/*.spec.ts'];

/**
 * The unit specs allowed the integration tiers' 60 s timeout, by file name: each starts worker
 * threads, builds or loads ONNX models, designs filters or renders documents in its hooks or
 * tests, which takes seconds on a loaded 2-core machine. Every other unit spec keeps Jest's 5 s.
 */
const SLOW_UNIT_SPECS = [
  // onnxruntime sessions in worker threads, over stand-in models built in the hooks
  'onnx-inference-runtime.spec.ts',
  'onnx-inference-runtime.providers.spec.ts',
  'model-precision.runtime.spec.ts',
  'batch-scheduler.spec.ts',
  'inference.service.spec.ts',
  'whisper-resident-cache.spec.ts',
  'local-whisper-asr.spec.ts',
  'local-onnx-llm-load.spec.ts',
  'batched-decode.spec.ts',
  'local-onnx-llm.spec.ts',
  'kv-cache-sequence.spec.ts',
  'smart-turn-classifier.spec.ts',
  'turn-detector.spec.ts',
  'silero-vad.spec.ts',
  'kokoro-tts.spec.ts',
  'piper-tts.spec.ts',
  'stand-in-models.spec.ts',
  'decoder-llm.stand-in.spec.ts',
  'build-stand-in-models.spec.ts',
  'models.command.spec.ts',
  'local-llm-pull.spec.ts',
  // Flite compiled to WebAssembly, instantiated per test
  'flite-tts.spec.ts',
  'memory-wasi.spec.ts',
  // resampler filter design and quality sweeps over seconds of audio
  'resampler-quality.spec.ts',
  'simd-chain.spec.ts',
  // the latency benchmark's caller threads and end-of-turn report run real audio through the pipeline
  'caller-thread.spec.ts',
  'end-of-turn-report.spec.ts',
  // the whole OpenAPI document generated from the app's controllers
  'openapi-document.spec.ts',
];

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const specPathPattern = (name: string) => `/${escapeRegExp(name)}$`;

const config: Config = {
  // On two cores Jest would run every file in one process, one after another, and what outlives a
  // file (module registries kept alive by leaked references) would pile up:
  // in CI the heap passed 1.2 GB and the 50-call burst spec, late in the run, saw 1.3 s event-loop
  // stalls and lost echo frames. This bound makes Jest run the files in a worker process and start a
  // fresh one whenever a file leaves it above the bound (about every 50 files here).
  workerIdleMemoryLimit: '700MB',
  // One test file more than there are cores. Most of an e2e file's time is spent waiting: on audio
  // paced in real time, on a spawned server, on a browser. Two files at a time took npm test from
  // about 22 to 13 minutes on this 2-core machine, three to about 10 (the CPU was 68 % busy with two,
  // 80 % with three). The specs wait for events, not durations, so a busier machine slows them
  // without failing them. Capped so a many-core laptop does not start a dozen servers at once.
  maxWorkers: Math.min(availableParallelism() + 1, 6),
  // The longest files first (test/support/longest-first-sequencer.cjs says why).
  testSequencer: '<rootDir>/test/support/longest-first-sequencer.cjs',
  projects: [
    // Unit specs live next to the code they test, and run under Jest's 5 s default: a unit test that
    // needs longer is either slow on purpose (named below) or stuck.
    {
      ...common,
      displayName: 'unit',
      testMatch: UNIT_SPECS,
      testPathIgnorePatterns: ['/node_modules/', ...SLOW_UNIT_SPECS.map(specPathPattern)],
    },
    {
      ...common,
      displayName: 'unit-slow',
      testMatch: SLOW_UNIT_SPECS.map((name) => `<rootDir>/{libs,apps}/**/${name}`),
      setupFilesAfterEnv: ['<rootDir>/test/support/slow-test-timeout.ts'],
    },
    // Integration specs run against a real Postgres (a fresh database per run).
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/support/slow-test-timeout.ts'],
    },
    // End-to-end specs boot the real server and dial it with the simulated Twilio caller.
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/support/slow-test-timeout.ts'],
    },
  ],
};

export default config;
