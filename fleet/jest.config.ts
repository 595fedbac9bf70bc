/**
 * The fleet test (`npm run fleet:test`): several replicas of every service behind HAProxy, rolled
 * while agents run. Its own target, outside `npm test`'s e2e run (see fleet/README.md).
 */
export default {
  displayName: 'fleet',
  preset: '../jest.preset.js',
  rootDir: '.',
  testMatch: ['**/*.fleet.spec.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 600_000,
};
