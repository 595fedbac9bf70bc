import { Writable } from 'node:stream';
import { createServer } from 'node:net';
import { startAdminServer, type AdminServer } from './admin-server';
import { Dependencies, isConnectionError, watchRedisConnection } from './dependencies';
import { createLogger } from './logger';
import { createMetricsRegistry } from './metrics';
import { describeWaiting, waitForReady } from './process/readiness';
import { createRedis, redisAddress } from './redis';

/** A logger whose lines land in `lines` (parsed). */
function capture(): { logger: ReturnType<typeof createLogger>; lines: { level: number; msg: string }[] } {
  const lines: { level: number; msg: string }[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { logger: createLogger({ service: 'test', level: 'debug', destination }), lines };
}

const WARN = 40;
const INFO = 30;

/** A loopback port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

describe('Dependencies', () => {
  it('names a dependency once when it goes down, stays quiet while it is down, and says once when it is back', () => {
    const { logger, lines } = capture();
    const deps = new Dependencies(logger);
    const redis = deps.track('redis', '10.0.0.7:6379');
    for (let i = 0; i < 5; i++) redis.down(new Error('connect ECONNREFUSED 10.0.0.7:6379\n    at stack frame'));
    redis.up();
    redis.up();
    const loud = lines.filter((l) => l.level >= INFO);
    expect(loud.map((l) => [l.level, l.msg])).toEqual([
      [WARN, 'redis at 10.0.0.7:6379 is unreachable (connect ECONNREFUSED 10.0.0.7:6379); retrying'],
      [INFO, 'redis at 10.0.0.7:6379 is reachable again'],
    ]);
    expect(lines.some((l) => JSON.stringify(l).includes('stack frame'))).toBe(false);
  });

  it('is ready only when every dependency that gates readiness is up, and lists the others with their last error', () => {
    const deps = new Dependencies(capture().logger);
    const redis = deps.track('redis', 'r:6379');
    const upstream = deps.track('engine upstream', 'http://vllm:8000');
    const optional = deps.track('cache', 'c:1', { gatesReadiness: false });
    expect(deps.ready).toBe(false);
    redis.up();
    upstream.down('GET /health answered 503');
    optional.down('ECONNREFUSED');
    expect(deps.ready).toBe(false);
    expect(deps.waiting()).toEqual([
      { dependency: 'engine upstream', address: 'http://vllm:8000', error: 'GET /health answered 503' },
    ]);
    expect(describeWaiting(deps.waiting())).toBe('engine upstream at http://vllm:8000 (GET /health answered 503)');
    upstream.up();
    expect(deps.ready).toBe(true);
    expect(deps.waiting()).toEqual([]);
  });

  it('tells connection failures from other errors', () => {
    expect(isConnectionError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isConnectionError(new Error('Connection is closed.'))).toBe(true);
    expect(isConnectionError(new Error('ERR unknown command'))).toBe(false);
    expect(isConnectionError(undefined)).toBe(false);
  });
});

describe('a service waiting for a dependency', () => {
  let admin: AdminServer | undefined;
  afterEach(async () => {
    await admin?.close();
    admin = undefined;
  });

  it('answers /readyz 503 naming a Redis that refuses connections, and the waiter is told within one probe', async () => {
    const port = await deadPort();
    const { logger } = capture();
    // disconnectTimeout 0: no timer left after disconnect() to hold Jest open.
    const url = `redis://127.0.0.1:${port}`;
    const redis = createRedis(url, { retryStrategy: () => 200, disconnectTimeout: 0 });
    try {
      const deps = new Dependencies(logger);
      watchRedisConnection(redis, deps.track('redis', redisAddress(url)));
      admin = await startAdminServer({
        port: 0,
        registry: createMetricsRegistry('t'),
        logger,
        isReady: () => true,
        dependencies: deps,
      });
      const told: string[] = [];
      const outcome = await waitForReady({
        url: `http://127.0.0.1:${admin.port}/readyz`,
        deadline: Date.now() + 1_500,
        onWaiting: (w) => told.push(describeWaiting(w)),
      });
      expect(outcome).toBe('timeout');
      // Reported once (the answer did not change), with the address and the reason.
      expect(told).toEqual([`redis at 127.0.0.1:${port} (connect ECONNREFUSED 127.0.0.1:${port})`]);
    } finally {
      redis.disconnect();
    }
  });

  it('answers 200 once the dependency is up, so waiting ends', async () => {
    const { logger } = capture();
    const deps = new Dependencies(logger);
    const upstream = deps.track('engine upstream', 'http://127.0.0.1:9');
    upstream.down('ECONNREFUSED');
    admin = await startAdminServer({
      port: 0,
      registry: createMetricsRegistry('t'),
      logger,
      isReady: () => true,
      dependencies: deps,
    });
    setTimeout(() => upstream.up(), 300);
    const outcome = await waitForReady({ url: `http://127.0.0.1:${admin.port}/readyz`, deadline: Date.now() + 10_000 });
    expect(outcome).toBe('ready');
  });
});
