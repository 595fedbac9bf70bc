/** Process-level tests: the real stack (five processes, Redis) driven by real clients. */
export default {
  displayName: 'e2e',
  preset: '../jest.preset.js',
  rootDir: '.',
  testMatch: ['**/*.e2e.spec.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 60_000,
  // The services run from bundles built once per run (src/global-setup.ts), as the image runs them.
  globalSetup: '<rootDir>/src/global-setup.ts',
  globalTeardown: '<rootDir>/src/global-teardown.ts',
};
