/**
 * Jest setup (every project, via jest.preset.js): after each test file, stop whatever child
 * processes it still owns and name them, so a forgotten service or a setup that timed out mid-start
 * fails loudly instead of keeping Jest from exiting (issue: a billing child that outlived its spec
 * held a CI run for 18 minutes).
 */
import { stopAllOwned } from '@fastloop/service-kit';

afterAll(async () => {
  const left = await stopAllOwned(5_000);
  if (left.length > 0) {
    process.stderr.write(`stopped ${left.length} child process(es) a test file left running: ${left.map((p) => `${p.name} (pid ${p.pid})`).join(', ')}\n`);
  }
}, 30_000);
