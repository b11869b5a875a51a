// Type-aware lint: the rules that catch real bugs in async, event-driven code (a floating promise
// in the media path is an unhandled rejection waiting to happen; a non-exhaustive switch over a
// protocol event silently drops a new event type).
import tseslint from 'typescript-eslint';

// Boundaries (issue 25): a lib is used through its entry point only (`@switchboard/<lib>`, never
// `@switchboard/<lib>/<path>` or a relative path into another lib), and test code stays out of
// production code.
const DEEP_LIB_IMPORTS = {
  group: ['@switchboard/*/**', '**/libs/*/src/**'],
  message: "Import another lib through its entry point ('@switchboard/<lib>'); export what you need from its src/index.ts.",
};
const TEST_CODE_IMPORTS = {
  group: ['@switchboard/testing', '**/test/**', '**/*.test-support', '**/*.spec'],
  message: 'Production code must not import test code (@switchboard/testing, test/, *.test-support, specs).',
};
const restrictImports = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
// A controller owns HTTP and calls its module's service; the service talks to the repositories. A
// persistence record type may still name a response's shape (type imports are erased).
const CONTROLLER_PERSISTENCE_IMPORTS = {
  group: ['@switchboard/persistence'],
  allowTypeImports: true,
  message: "A controller calls its module's service; the service talks to the repositories.",
};
// Test-only code and the dev-only CLIs that build stand-in models or run benchmarks.
const TEST_CODE = ['test/**/*.ts', 'libs/testing/**/*.ts', '**/*.spec.ts', '**/*.e2e-spec.ts', '**/*.test-support.ts', 'apps/cli/src/bench/**/*.ts', 'apps/cli/src/models/build-stand-in-models.ts'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'libs/persistence/src/generated/**', 'coverage/**', '*.mjs', '*.js', 'apps/console/vite.config.mjs', 'apps/cli/build-if-changed.mjs', 'test/support/longest-first-sequencer.cjs', 'test/support/record-spec-durations.mjs', 'apps/console/public/**'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // Tests and JSON bodies handle untyped data on purpose; the type-checker still sees the rest.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  { files: ['**/*.ts'], rules: restrictImports(DEEP_LIB_IMPORTS, TEST_CODE_IMPORTS) },
  { files: TEST_CODE, rules: restrictImports({ ...DEEP_LIB_IMPORTS, group: ['@switchboard/*/**'] }) },
  {
    files: ['apps/server/src/**/*.controller.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [CONTROLLER_PERSISTENCE_IMPORTS] }] },
  },
  {
    // Test doubles and specs poke at arbitrary JSON on purpose.
    files: ['test/**/*.ts', 'libs/testing/**/*.ts', '**/*.spec.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
