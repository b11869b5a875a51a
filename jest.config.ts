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

const common = { rootDir: __dirname, moduleNameMapper, transform, testEnvironment: 'node' as const };

const config: Config = {
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
