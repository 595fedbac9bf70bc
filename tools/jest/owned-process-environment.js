// Jest's node environment, plus one duty: when a test file has finished — after its own afterAll
// hooks, so a stack is still stopped in order by the file itself — stop whatever child processes
// the file still owns (the setup file stop-owned-processes.ts registers how). A hook in the setup
// file would run before the file's own afterAll hooks and cut every stack short.
const { TestEnvironment } = require('jest-environment-node');

class OwnedProcessEnvironment extends TestEnvironment {
  async handleTestEvent(event) {
    if (event.name !== 'run_finish') return;
    const stopLeftovers = this.global.__fastloopStopLeftoverProcesses;
    if (typeof stopLeftovers === 'function') await stopLeftovers();
  }
}

module.exports = OwnedProcessEnvironment;
