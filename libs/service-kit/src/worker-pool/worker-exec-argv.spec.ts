import { Worker } from 'node:worker_threads';
import { workerExecArgv } from './worker-exec-argv';

describe('workerExecArgv', () => {
  it("keeps the process's module-loading flags and drops the per-process ones a worker refuses", () => {
    const argv = [
      '--expose-gc',
      '--import',
      'tsx',
      '--max-old-space-size=512',
      '--require=./setup.js',
      '--enable-source-maps',
      '--inspect=0',
      '--no-warnings=ExperimentalWarning',
      '--experimental-vm-modules',
    ];
    const kept = workerExecArgv(argv);
    expect(kept).toEqual([
      '--import',
      'tsx',
      '--require=./setup.js',
      '--enable-source-maps',
      '--no-warnings=ExperimentalWarning',
      '--experimental-vm-modules',
    ]);
  });

  it('gives flags a worker starts with, where the process flags as they are make it throw', async () => {
    const argv = ['--expose-gc', '--enable-source-maps'];
    expect(() => new Worker('', { eval: true, execArgv: argv })).toThrow(/execArgv/);
    const worker = new Worker('', { eval: true, execArgv: workerExecArgv(argv) });
    await new Promise((resolve) => worker.once('exit', resolve));
  });
});
