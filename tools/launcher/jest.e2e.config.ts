/** The launcher's process-level tests (`*.e2e.spec.ts`): the real stack, killed the hard way. */
export default {
  displayName: 'launcher-e2e',
  preset: '../../jest.preset.js',
  rootDir: '.',
  testMatch: ['**/*.e2e.spec.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 240_000,
};
