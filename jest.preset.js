// Shared Jest settings. ts-jest transpiles only (isolatedModules in tsconfig.base.json):
// type errors are caught once by `tsc --noEmit` in `npm test`, not per test file.
const path = require('node:path');
const { pathsToModuleNameMapper } = require('ts-jest');
const { compilerOptions } = require('./tsconfig.base.json');

module.exports = {
  testEnvironment: path.join(__dirname, 'tools/jest/owned-process-environment.js'),
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: path.join(__dirname, 'tsconfig.base.json') }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper: pathsToModuleNameMapper(compilerOptions.paths, { prefix: __dirname + '/' }),
  testMatch: ['**/?(*.)spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '\\.e2e\\.spec\\.ts$'],
  // A deadline against hangs, not a speed check: Jest's 5 s default failed hooks that load a model
  // (~1.6 s idle) when CI shares two cores with other work (load 15–20 seen).
  testTimeout: 60_000,
  setupFilesAfterEnv: [path.join(__dirname, 'tools/jest/stop-owned-processes.ts')],
  reporters: ['default', path.join(__dirname, 'tools/jest/running-tests-reporter.js')],
};
