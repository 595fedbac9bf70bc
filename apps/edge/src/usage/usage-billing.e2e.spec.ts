import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { billingV1 } from '@fastloop/proto';
import {
  createLogger,
  getFreePort,
  startLocalRedis,
  startNodeService,
  type LocalRedis,
  type OwnedProcess,
} from '@fastloop/service-kit';
import { Registry } from 'prom-client';
import { UsageOutbox } from './usage-outbox';

// Process-level: the real billing service (apps/billing/src/main.ts, started as the launcher does,
// with tsx) consumes what this outbox produces. Apps never import apps, so billing runs as a process.
const repoRoot = resolve(__dirname, '../../../..');

interface Billing {
  proc: OwnedProcess;
  httpPort: number;
}

async function startBilling(redisUrl: string): Promise<Billing> {
  const [adminPort, httpPort] = [await getFreePort(), await getFreePort()];
  const proc = await startNodeService({
    name: 'billing',
    entry: join(repoRoot, 'apps/billing/src/main.ts'),
    cwd: repoRoot,
    env: {
      ...process.env,
      REDIS_URL: redisUrl,
      ADMIN_PORT: String(adminPort),
      BILLING_HTTP_PORT: String(httpPort),
      LOG_LEVEL: 'info',
    },
    readyUrl: `http://127.0.0.1:${adminPort}/readyz`,
  });
  return { proc, httpPort };
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
    await billing?.proc.stop(5_000);
    await redis?.stop();
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
      {
        tenant: 'e2e',
        model: 'gpt-oss-20b',
        day: null,
        requests: 2,
        input_tokens: 120,
        cached_tokens: 2,
        output_tokens: 4,
        reasoning_tokens: 6,
      },
    ]);
    const day = (await (await fetch(`${url}&day=2025-05-06`)).json()) as { data: unknown[] };
    expect(day.data).toEqual([{ ...rows[0], day: '2025-05-06' }]);

    await expect(billing.proc.stop(30_000)).resolves.toMatchObject({ code: 0, forced: false });
  });
});
