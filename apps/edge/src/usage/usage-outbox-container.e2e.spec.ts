import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { getFreePort, startLocalRedis, type LocalRedis } from '@fastloop/service-kit';
import { Queue } from 'bullmq';
import { USAGE_QUEUE_NAME } from './usage-job';
import { queuedRecordCount } from '../testing/queued-usage';

const repoRoot = resolve(__dirname, '../../../..');
/** A new user and pid namespace per run: the child is pid 1, as an edge in a container is. */
const UNSHARE = ['-U', '-r', '-p', '-f', '--mount-proc'];
const canUnshare = spawnSync('unshare', [...UNSHARE, 'true']).status === 0;

/** Starts the child as pid 1 of a fresh namespace; resolves with its host pid once it says ready. */
async function startAsPid1(args: string[]): Promise<{ unshare: ChildProcess; hostPid: number; line: string }> {
  const unshare = spawn(
    'unshare',
    [...UNSHARE, process.execPath, '--import', 'tsx', 'apps/edge/src/testing/outbox-pid1-child.ts', ...args],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const line = await new Promise<string>((done, fail) => {
    let out = '';
    unshare.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('\n')) done(out.trim());
    });
    unshare.once('exit', (code) => fail(new Error(`child exited (${code}) before it was ready`)));
  });
  // unshare -f forks: the node process is its only child (the namespace's pid 1).
  const children = readFileSync(`/proc/${unshare.pid}/task/${unshare.pid}/children`, 'utf8').trim().split(/\s+/);
  return { unshare, hostPid: Number(children[0]), line };
}

async function kill(run: { unshare: ChildProcess; hostPid: number }): Promise<void> {
  if (run.unshare.exitCode !== null || run.unshare.signalCode !== null) return;
  const exited = new Promise((done) => run.unshare.once('exit', done));
  try {
    process.kill(run.hostPid, 'SIGKILL');
  } catch {
    // already gone
  }
  await exited;
}

(canUnshare ? describe : describe.skip)('usage outbox in a container (pid 1 every start)', () => {
  let dir: string;
  let redis: LocalRedis | undefined;
  const runs: { unshare: ChildProcess; hostPid: number }[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fastloop-outbox-pid1-'));
  });
  afterEach(async () => {
    await Promise.all(runs.splice(0).map(kill));
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("replays a crashed pid 1's records when the next pid 1 starts on the same folder", async () => {
    const deadRedis = `redis://127.0.0.1:${await getFreePort()}`;
    const crashed = await startAsPid1(['crash', dir, deadRedis, '300']);
    runs.push(crashed);
    expect(crashed.line).toBe('ready pid=1');
    await kill(crashed);

    redis = await startLocalRedis();
    const next = await startAsPid1(['deliver', dir, redis.url, '0']);
    runs.push(next);
    expect(next.line).toBe('ready pid=1');
    const queue = new Queue(USAGE_QUEUE_NAME, { connection: { url: redis.url } });
    try {
      const deadline = Date.now() + 20_000;
      while ((await queuedRecordCount(queue)) < 300 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect(await queuedRecordCount(queue, ['waiting'])).toBe(300);
    } finally {
      await queue.close();
    }
  });
});
