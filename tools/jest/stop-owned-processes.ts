/**
 * Jest setup (every project, via jest.preset.js): once a test file has finished, stop whatever
 * child processes it still owns and name them, so a forgotten service or a setup that timed out
 * mid-start fails loudly instead of keeping Jest from exiting (a billing child that outlived its
 * spec once held a CI run for 18 minutes). owned-process-environment.js calls this after the
 * file's own afterAll hooks.
 */
import { stopAllOwned } from '@fastloop/service-kit';

(globalThis as { __fastloopStopLeftoverProcesses?: () => Promise<void> }).__fastloopStopLeftoverProcesses =
  async () => {
    const left = await stopAllOwned(5_000);
    if (left.length > 0) {
      process.stderr.write(
        `stopped ${left.length} child process(es) a test file left running: ${left.map((p) => `${p.name} (pid ${p.pid})`).join(', ')}\n`,
      );
    }
  };
