import { Agent, createServer, request } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { closeServer, listen, startAdminServer, type AdminServer } from './admin-server';
import type { GcReport } from './debug-gc';
import { createLogger } from './logger';
import { createMetricsRegistry } from './metrics';

const silent = createLogger({ service: 'test', level: 'silent' });

function call(port: number, method: string, path: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The real `gc()` that `--expose-gc` would give: V8 exposes it to contexts created after the flag is set. */
function realGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** External memory while `count` Buffers of `bytes` exist; nothing holds them once this returns. */
function externalWhileHolding(count: number, bytes: number): number {
  const buffers = Array.from({ length: count }, () => Buffer.alloc(bytes, 1));
  const held = process.memoryUsage().external;
  buffers.length = 0;
  return held;
}

describe('startAdminServer', () => {
  let admin: AdminServer;
  const holder = globalThis as { gc?: () => void };
  const ownGc = holder.gc;

  beforeEach(async () => {
    admin = await startAdminServer({
      port: 0,
      registry: createMetricsRegistry('test'),
      isReady: () => true,
      logger: silent,
    });
  });

  afterEach(async () => {
    holder.gc = ownGc;
    await admin.close();
  });

  it('serves health, readiness and metrics', async () => {
    expect(await call(admin.port, 'GET', '/healthz')).toMatchObject({ status: 200, body: 'ok\n' });
    expect(await call(admin.port, 'GET', '/readyz')).toMatchObject({ status: 200 });
    expect((await call(admin.port, 'GET', '/metrics')).body).toContain('nodejs_heap_size_used_bytes');
  });

  it('has no /debug/gc when the process runs without --expose-gc', async () => {
    delete holder.gc;
    expect(await call(admin.port, 'POST', '/debug/gc')).toMatchObject({ status: 404 });
  });

  it('forces a full garbage collection on POST /debug/gc under --expose-gc and answers the surviving heap', async () => {
    const gc = jest.fn(realGc());
    holder.gc = gc;
    // Only a WeakRef holds this; it survives until a collection runs (the job that made it is over by then).
    const ref = new WeakRef({ garbage: new Array(100_000).fill(1) });
    const externalHeld = externalWhileHolding(100, 100_000);
    const res = await call(admin.port, 'POST', '/debug/gc');
    expect(res).toMatchObject({ status: 200, type: 'application/json' });
    const report = JSON.parse(res.body) as GcReport;
    expect(gc).toHaveBeenCalledTimes(2);
    expect(ref.deref()).toBeUndefined();
    expect(report.gcMs).toBeGreaterThanOrEqual(0);
    expect(report.heap.used_heap_size).toBeGreaterThan(0);
    expect(report.heap.used_heap_size).toBeLessThanOrEqual(report.heap.total_heap_size);
    // The Buffers, garbage since externalWhileHolding returned, are no longer counted.
    expect(report.memory.external).toBeLessThan(externalHeld - 5_000_000);
  });

  it('refuses any method but POST on /debug/gc', async () => {
    const gc = jest.fn();
    holder.gc = gc;
    expect(await call(admin.port, 'GET', '/debug/gc')).toMatchObject({ status: 405 });
    expect(gc).not.toHaveBeenCalled();
  });
});

describe('closeServer', () => {
  it('ends pooled keep-alive connections and closes the one whose response is running once it ends', async () => {
    const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
      if (req.url === '/slow') setTimeout(() => res.end('slow'), 300);
      else res.end('ok');
    });
    await listen(server, 0, '127.0.0.1');
    const { port } = server.address() as { port: number };
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    const get = (path: string) =>
      new Promise<{ body: string; connection: string | undefined }>((resolve, reject) => {
        request({ host: '127.0.0.1', port, path, agent }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ body, connection: res.headers.connection }));
        })
          .on('error', reject)
          .end();
      });
    try {
      // One pooled idle connection and one with a running response, as a load balancer holds them.
      await get('/fast');
      const slow = get('/slow');
      await new Promise((r) => setTimeout(r, 50));
      // Resolves long before the 60 s keep-alive timeout (Jest's 5 s would fail it otherwise).
      const closed = closeServer(server);
      expect(await slow).toEqual({ body: 'slow', connection: 'keep-alive' });
      await closed;
      expect(server.listening).toBe(false);
    } finally {
      agent.destroy();
    }
  });
});
