import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRedisReachable } from '@fastloop/service-kit';

/** A redis-server on a fixed port that can be stopped and started again, like a restarting Redis. */
export class RestartableRedis {
  private child?: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'fastloop-redis-'));
  constructor(readonly port: number) {}
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      this.dir,
    ];
    this.child = spawn('redis-server', args, { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    while (!(await isRedisReachable(this.url, 200))) {
      if (Date.now() > deadline) throw new Error('timed out waiting for redis-server to start');
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGKILL');
    });
  }
  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
