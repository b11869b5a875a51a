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

const config: Config = {
  // On two cores Jest would run every file in one process, one after another, and what outlives a
  // file (module registries kept alive by leaked references) would pile up:
  // in CI the heap passed 1.2 GB and the 50-call burst spec, late in the run, saw 1.3 s event-loop
  // stalls and lost echo frames. This bound makes Jest run the files in a worker process and start a
  // fresh one whenever a file leaves it above the bound (about every 50 files here).
  workerIdleMemoryLimit: '700MB',
  projects: [
    // Unit specs live next to the code they test.
    // Some unit specs start worker threads and build stand-in models in their hooks, which takes
    // seconds on a loaded 2-core machine: same generous timeout as the integration tiers.
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts'],
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
