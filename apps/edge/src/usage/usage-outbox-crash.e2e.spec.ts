import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createLogger, getFreePort, startLocalRedis, type LocalRedis } from '@fastloop/service-kit';
import { Queue } from 'bullmq';
import { Registry } from 'prom-client';
import { USAGE_QUEUE_NAME } from './usage-job';
import { queuedRecordCount } from '../testing/queued-usage';
import { UsageOutbox } from './usage-outbox';

const repoRoot = resolve(__dirname, '../../../..');

describe('usage outbox after a crash', () => {
  let dir: string;
  let redis: LocalRedis | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fastloop-outbox-crash-'));
  });
  afterEach(async () => {
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers every record a SIGKILLed process had accepted while Redis was away, exactly once each', async () => {
    const deadRedis = `redis://127.0.0.1:${await getFreePort()}`;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'apps/edge/src/testing/outbox-crash-child.ts', dir, deadRedis, '500'],
      { cwd: repoRoot, stdio: 'inherit' },
    );
    const signal = await new Promise<NodeJS.Signals | null>((done) => child.once('exit', (_code, sig) => done(sig)));
    expect(signal).toBe('SIGKILL');

    redis = await startLocalRedis();
    const registry = new Registry();
    const outbox = new UsageOutbox({
      dir,
      redisUrl: redis.url,
      registry,
      logger: createLogger({ service: 'edge-test', level: 'silent' }),
    });
    const queue = new Queue(USAGE_QUEUE_NAME, { connection: { url: redis.url } });
    try {
      const deadline = Date.now() + 20_000;
      while ((await queuedRecordCount(queue)) < 500 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await queuedRecordCount(queue, ['waiting'])).toBe(500);
    } finally {
      await outbox.close();
      await queue.close();
    }
  });
});
