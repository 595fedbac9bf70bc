/**
 * Starting without a dependency, the way a cluster starts pods in any order: the service names the
 * dependency and its address within one readiness probe, stays not-ready (503) while retrying
 * quietly, and becomes ready by itself once the dependency answers.
 */
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { join, resolve } from 'node:path';
import {
  describeWaiting,
  getFreePort,
  spawnNodeService,
  spawnOwned,
  waitForReady,
  type OwnedProcess,
  type WaitingFor,
} from '@fastloop/service-kit';
import { serviceEntry } from './service-entries';

const repoRoot = resolve(__dirname, '../..');

/** Waits until /readyz names a failed dependency; resolves what it said. Fails if the service becomes ready or dies first. */
async function firstWaiting(proc: OwnedProcess, adminPort: number): Promise<readonly WaitingFor[]> {
  let told: readonly WaitingFor[] | undefined;
  const stop = new AbortController();
  void proc.exited.then(() => stop.abort());
  const outcome = await waitForReady({
    url: `http://127.0.0.1:${adminPort}/readyz`,
    deadline: Date.now() + 120_000,
    signal: stop.signal,
    onWaiting: (w) => {
      told = w;
      stop.abort();
    },
  });
  if (!told) throw new Error(`never said what it waits for (${outcome}):\n${proc.tail(20).join('\n')}`);
  return told;
}

/**
 * A free port below the ephemeral ranges (Linux 32768–60999, others 49152–65535) for a dependency
 * that starts seconds after the service: a port from getFreePort (port 0) stays unbound that long,
 * and the OS may give it meanwhile to any connection or listener of the tests `npm test` runs beside
 * this one (a Redis that then cannot bind left billing waiting 60 s once in CI); below those ranges
 * the OS hands it to no one.
 */
async function portOutsideEphemeralRange(): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await canBind(port)) return port;
  }
  throw new Error('no free port in 20000-31999');
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createTcpServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** Fails with both processes' last lines unless `outcome` is ready. */
function expectReady(outcome: string, service: OwnedProcess, dependency: OwnedProcess | undefined): void {
  if (outcome === 'ready') return;
  const dep = dependency
    ? `${dependency.exitInfo ? `exited (${JSON.stringify(dependency.exitInfo)})` : 'running'}:\n${dependency.tail(20).join('\n')}`
    : '';
  throw new Error(`not ready (${outcome}); dependency ${dep}\nservice:\n${service.tail(30).join('\n')}`);
}

/** Log lines at warn or above that mention `text`. */
function warnings(proc: OwnedProcess, text: string): string[] {
  return proc.tail(200).filter((l) => l.includes(text) && /"level":(40|50|60)/.test(l));
}

describe('starting without a dependency', () => {
  it('billing names an unreachable Redis with its address, retries quietly while not ready, and is ready once Redis answers', async () => {
    const redisPort = await portOutsideEphemeralRange();
    const admin = await getFreePort();
    const billing = spawnNodeService({
      name: 'billing',
      entry: serviceEntry('billing'),
      cwd: repoRoot,
      env: {
        ...process.env,
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        ADMIN_PORT: String(admin),
        BILLING_HTTP_PORT: '0',
        LOG_LEVEL: 'info',
      },
    });
    let redis: OwnedProcess | undefined;
    try {
      const waiting = await firstWaiting(billing, admin);
      expect(describeWaiting(waiting)).toBe(
        `redis at 127.0.0.1:${redisPort} (connect ECONNREFUSED 127.0.0.1:${redisPort})`,
      );
      // Retrying, not exiting: a second look a little later finds it still up and still not ready.
      await new Promise((r) => setTimeout(r, 1_500));
      expect(billing.exitInfo).toBeUndefined();
      expect((await fetch(`http://127.0.0.1:${admin}/readyz`)).status).toBe(503);

      redis = spawnOwned({
        name: 'redis',
        command: 'redis-server',
        args: ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      });
      const outcome = await waitForReady({ url: `http://127.0.0.1:${admin}/readyz`, deadline: Date.now() + 60_000 });
      expectReady(outcome, billing, redis);
      // One line named the outage, however many reconnects it took; no stack traces.
      expect(warnings(billing, 'ECONNREFUSED')).toHaveLength(1);
      expect(billing.tail(200).filter((l) => l.includes('    at '))).toEqual([]);
    } finally {
      await billing.stop(10_000);
      await redis?.stop(5_000);
    }
  }, 180_000);

  it('inference names a vLLM upstream that does not answer, and is ready once its /health does', async () => {
    const upstreamPort = await portOutsideEphemeralRange();
    const admin = await getFreePort();
    const inference = spawnNodeService({
      name: 'inference',
      entry: serviceEntry('inference'),
      cwd: repoRoot,
      env: {
        ...process.env,
        INFERENCE_ENGINE: 'openai-compatible',
        OPENAI_COMPAT_URL: `http://127.0.0.1:${upstreamPort}`,
        INFERENCE_ENGINE_HEALTH_INTERVAL_MS: '200',
        GRPC_PORT: '0',
        ADMIN_PORT: String(admin),
        LOG_LEVEL: 'info',
      },
    });
    let upstream: Server | undefined;
    try {
      const waiting = await firstWaiting(inference, admin);
      expect(describeWaiting(waiting)).toBe(`engine upstream at http://127.0.0.1:${upstreamPort} (ECONNREFUSED)`);
      // A stand-in for vLLM coming up: its /health answers 200.
      upstream = createServer((req, res) => res.writeHead(req.url === '/health' ? 200 : 404).end());
      await new Promise<void>((r) => upstream!.listen(upstreamPort, '127.0.0.1', r));
      const outcome = await waitForReady({ url: `http://127.0.0.1:${admin}/readyz`, deadline: Date.now() + 60_000 });
      expect(outcome).toBe('ready');
      expect(warnings(inference, 'is unreachable')).toHaveLength(1);
    } finally {
      await inference.stop(10_000);
      upstream?.closeAllConnections();
      await new Promise((r) => (upstream ? upstream.close(r) : r(undefined)));
    }
  }, 180_000);
});
