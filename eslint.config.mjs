// Lint is deliberately small: module boundaries (STYLE.md rule 2) and no console output in
// services. Type errors are tsc's job (`npm run typecheck`).
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

export default [
  { ignores: ['**/node_modules/**', '**/dist/**', 'libs/proto/src/generated/**', '.nx/**', 'bench/results/**'] },
  {
    files: ['**/*.ts', '**/*.mjs'],
    languageOptions: { parser: tseslint.parser, ecmaVersion: 2023, sourceType: 'module' },
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            // The external and internal contracts and the chat formats stand alone.
            { sourceTag: 'type:protocol', onlyDependOnLibsWithTags: ['type:test-kit'] },
            { sourceTag: 'type:proto', onlyDependOnLibsWithTags: ['type:test-kit'] },
            { sourceTag: 'type:model-profiles', onlyDependOnLibsWithTags: ['type:test-kit'] },
            { sourceTag: 'type:service-kit', onlyDependOnLibsWithTags: ['type:proto', 'type:test-kit'] },
            // Checks and dependency gates for tests: any project's tests may use it; it uses nothing.
            { sourceTag: 'type:test-kit', onlyDependOnLibsWithTags: [] },
            // Apps use libs and never each other (billing cannot reach into edge, …).
            {
              sourceTag: 'type:app',
              onlyDependOnLibsWithTags: [
                'type:protocol',
                'type:proto',
                'type:model-profiles',
                'type:service-kit',
                'type:test-kit',
              ],
            },
            {
              sourceTag: 'type:tool',
              onlyDependOnLibsWithTags: [
                'type:tool',
                'type:protocol',
                'type:proto',
                'type:model-profiles',
                'type:service-kit',
                'type:test-kit',
              ],
            },
            {
              sourceTag: 'type:e2e',
              onlyDependOnLibsWithTags: [
                'type:tool',
                'type:protocol',
                'type:proto',
                'type:model-profiles',
                'type:service-kit',
                'type:test-kit',
              ],
            },
            // The deploy tests start bundled services with the launcher and service-kit.
            {
              sourceTag: 'type:deploy',
              onlyDependOnLibsWithTags: [
                'type:test-kit',
                'type:tool',
                'type:service-kit',
                'type:proto',
                'type:model-profiles',
              ],
            },
          ],
        },
      ],
    },
  },
  {
    // Services log with pino; only CLIs (launcher, benchmarks) print.
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/testing/**', '**/bench/**'],
    rules: { 'no-console': 'error' },
  },
  {
    // test-kit (ajv, dependency gates) is for tests: code that ships never loads it.
    files: ['apps/**/*.ts', 'libs/**/*.ts', 'tools/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/testing/**', 'libs/test-kit/**', 'tools/jest/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: '@fastloop/test-kit', message: 'test-kit is for tests (*.spec.ts, testing/)' }] },
      ],
    },
  },
];
