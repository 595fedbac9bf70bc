/** The edge's process-level tests (`*.e2e.spec.ts`): real child processes and a private Redis. */
export default {
  displayName: 'edge-e2e',
  preset: '../../jest.preset.js',
  rootDir: '.',
  testMatch: ['**/*.e2e.spec.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 60_000,
};
