import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { billingV1 } from '@fastloop/proto';
import { createLogger, startLocalRedis, type LocalRedis } from '@fastloop/service-kit';
import { Registry } from 'prom-client';
import { UsageOutbox } from './usage-outbox';

// Process-level: the real billing service (apps/billing/src/main.ts, started as the launcher does,
// with tsx) consumes what this outbox produces. Apps never import apps, so billing runs as a process.
const repoRoot = resolve(__dirname, '../../../..');

interface Billing {
  child: ChildProcess;
  httpPort: number;
  exited: Promise<number | null>;
}

function startBilling(redisUrl: string): Promise<Billing> {
  const child = spawn(join(repoRoot, 'node_modules/.bin/tsx'), ['apps/billing/src/main.ts'], {
    cwd: repoRoot,
    env: { ...process.env, REDIS_URL: redisUrl, ADMIN_PORT: '0', BILLING_HTTP_PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return new Promise((ready, fail) => {
    const timer = setTimeout(() => fail(new Error('billing did not log ready')), 20_000);
    exited.then((code) => fail(new Error(`billing exited early with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line) as { msg?: string; httpPort?: number };
      if (entry.msg === 'ready') {
        clearTimeout(timer);
        ready({ child, httpPort: entry.httpPort!, exited });
      }
    });
  });
}

const record = (responseId: string, inputTokens: number) =>
  billingV1.UsageRecord.fromPartial({
    responseId,
    tenant: 'e2e',
    model: 'gpt-oss-20b',
    inputTokens,
    cachedTokens: 1,
    outputTokens: 2,
    reasoningTokens: 3,
    completedAtMs: Date.UTC(2025, 4, 6, 7),
    transport: 'websocket',
    status: 'completed',
  });

describe('usage outbox → billing service', () => {
  let redis: LocalRedis;
  let dir: string;
  let billing: Billing | undefined;

  beforeAll(async () => {
    redis = await startLocalRedis();
    dir = mkdtempSync(join(tmpdir(), 'fastloop-outbox-e2e-'));
  });
  afterAll(async () => {
    billing?.child.kill('SIGKILL');
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('bills every response exactly once, including records produced before billing started and duplicates', async () => {
    const logger = createLogger({ service: 'edge-e2e', level: 'silent' });
    const outbox = new UsageOutbox({ redisUrl: redis.url, registry: new Registry(), logger, dir });
    outbox.enqueue(record('resp_e2e_1', 100)); // waits in the queue until billing runs
    outbox.enqueue(record('resp_e2e_1', 100));

    billing = await startBilling(redis.url);
    outbox.enqueue(record('resp_e2e_2', 20));
    const second = new UsageOutbox({ redisUrl: redis.url, registry: new Registry(), logger, dir: join(dir, 'second') });
    second.enqueue(record('resp_e2e_1', 100));
    await Promise.all([outbox.close(), second.close()]);

    const url = `http://127.0.0.1:${billing.httpPort}/v1/usage?tenant=e2e&model=gpt-oss-20b`;
    let rows: Record<string, unknown>[] = [];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      rows = ((await (await fetch(url)).json()) as { data: Record<string, unknown>[] }).data;
      if (rows[0]?.requests === 2) break;
    }
    expect(rows).toEqual([
      { tenant: 'e2e', model: 'gpt-oss-20b', day: null, requests: 2, input_tokens: 120, cached_tokens: 2, output_tokens: 4, reasoning_tokens: 6 },
    ]);
    const day = (await (await fetch(`${url}&day=2025-05-06`)).json()) as { data: unknown[] };
    expect(day.data).toEqual([{ ...rows[0], day: '2025-05-06' }]);

    billing.child.kill('SIGTERM');
    await expect(billing.exited).resolves.toBe(0);
    billing = undefined;
  });
});
