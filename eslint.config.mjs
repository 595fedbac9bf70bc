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
            { sourceTag: 'type:protocol', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'type:proto', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'type:model-profiles', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'type:service-kit', onlyDependOnLibsWithTags: ['type:proto'] },
            // Apps use libs and never each other (billing cannot reach into edge, …).
            {
              sourceTag: 'type:app',
              onlyDependOnLibsWithTags: ['type:protocol', 'type:proto', 'type:model-profiles', 'type:service-kit'],
            },
            {
              sourceTag: 'type:tool',
              onlyDependOnLibsWithTags: [
                'type:tool',
                'type:protocol',
                'type:proto',
                'type:model-profiles',
                'type:service-kit',
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
              ],
            },
            // The deploy tests start bundled services with the launcher and service-kit.
            {
              sourceTag: 'type:deploy',
              onlyDependOnLibsWithTags: ['type:tool', 'type:service-kit', 'type:proto', 'type:model-profiles'],
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
];
