/**
 * Several replicas of every service, proven together: 2 edges behind HAProxy, 2 safety, 2 routers,
 * 3 inference workers, billing and one Redis, while 20 agent loops run over WebSocket (the official
 * SDK's ResponsesWS) and HTTP/SSE, with store true and false. Each edge, then one worker, then one
 * safety replica is restarted the way a rolling update does it. store: true conversations lose no
 * turn; store: false WebSocket conversations are told previous_response_not_found after their edge
 * goes and recover by resending their full input; billing's ledger equals what the clients saw.
 * Then the same on a real 3-master Redis Cluster (store, queue and ledger keys across shards).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describeWhenAvailable } from '@fastloop/test-kit';
import { buildBundles, Fleet } from './fleet';
import { haproxyInstalled } from './haproxy';
import { agentSpecs, renderReport, runScenario, type ScenarioResult } from './scenario';

const repoRoot = resolve(__dirname, '../..');
const workDir = join(repoRoot, '.fastloop', 'fleet');
const bundles = join(workDir, 'bundles');
/** What the fleet runs besides the services: skipped without it, failed under CI=true (test-kit). */
const fleetTools = {
  name: 'haproxy, redis-server and redis-cli on PATH',
  available:
    haproxyInstalled() &&
    !spawnSync('redis-server', ['--version']).error &&
    !spawnSync('redis-cli', ['--version']).error,
  howToGet: 'apt-get install haproxy redis-server (Debian bookworm: HAProxy 2.6, Redis 7.0)',
};

/** Simulated model pacing and drain timing shared by both fleets. */
const FLEET_ENV = {
  SIM_TTFT_MS: '20',
  SIM_TOKENS_PER_SECOND: '2000',
  SIM_TOOL_CALLS: '2',
  SIM_ANSWER_WORDS: '20',
  // The routers check the workers every 250 ms (fleet.ts): a draining worker serves until they saw it.
  INFERENCE_DRAIN_QUIET_MS: '600',
};

/** What every run must show: no failed turn, the documented recoveries, usage exact. */
function expectNoLoss(result: ScenarioResult, expectNotFound: boolean): void {
  // Every kind of agent made progress.
  for (const kind of ['ws-store', 'ws-nostore', 'http-store', 'http-nostore'])
    expect([kind, result.records.some((r) => r.agent.startsWith(kind) && r.outcome === 'completed')]).toEqual([
      kind,
      true,
    ]);
  // 0 failed turns: store true continued on the other edge from Redis; store false recovered from
  // previous_response_not_found by resending its input.
  expect(result.failures).toEqual([]);
  const notFound = result.records.filter((r) => r.outcome === 'not_found');
  expect(notFound.every((r) => r.transport === 'ws' && !r.store)).toBe(true);
  if (expectNotFound) expect(notFound.length).toBeGreaterThan(0);
  // The drained edges closed their WebSockets for the SDK to reconnect (1001), and store: true
  // conversations went on by id on their new edge.
  expect(Object.values(result.reconnects).some((n) => n > 0)).toBe(true);
  expect(
    result.records.some((r) => r.store && r.transport === 'ws' && r.afterReconnect && r.outcome === 'completed'),
  ).toBe(true);
  // Usage exact: billing's ledger per tenant is what the clients saw.
  expect(result.ledger).toEqual(result.seen);
  // Every restarted replica drained and exited by itself.
  for (const r of result.restarts) expect([r.replica, r.exit.forced, r.exit.code]).toEqual([r.replica, false, 0]);
}

describeWhenAvailable(fleetTools)('a fleet on one machine, rolled while agents run', () => {
  beforeAll(() => {
    rmSync(workDir, { recursive: true, force: true });
    mkdirSync(workDir, { recursive: true });
    buildBundles(bundles);
  }, 120_000);

  it('restarts each edge, a worker and a safety replica with 0 failed turns, and bills exactly what the clients saw', async () => {
    const specs = agentSpecs({ wsStore: 8, wsNoStore: 4, httpStore: 4, httpNoStore: 4 });
    const fleet = await Fleet.start({
      dir: join(workDir, 'standalone'),
      bundles,
      apiKeys: specs.map((s) => `${s.apiKey}:${s.tenant}`).join(','),
      env: FLEET_ENV,
    });
    try {
      const result = await runScenario(fleet, specs, ['edge-0', 'edge-1', 'inference-1', 'safety-0']);
      writeFileSync(join(workDir, 'report.json'), `${JSON.stringify(result, null, 2)}\n`);
      process.stdout.write(renderReport('fleet (one Redis)', result));
      expectNoLoss(result, true);
    } finally {
      await fleet.stop();
    }
  }, 600_000);

  it('keeps store, queue and ledger keys working on a real 3-master Redis Cluster while an edge restarts', async () => {
    const specs = agentSpecs({ wsStore: 3, wsNoStore: 1, httpStore: 2, httpNoStore: 2 });
    const fleet = await Fleet.start({
      dir: join(workDir, 'cluster'),
      bundles,
      redis: 'cluster',
      replicas: { safety: 1, router: 1, inference: 2 },
      apiKeys: specs.map((s) => `${s.apiKey}:${s.tenant}`).join(','),
      env: FLEET_ENV,
    });
    try {
      expect(fleet.redisUrl).toMatch(/^redis\+cluster:\/\/(127\.0\.0\.1:\d+,){2}127\.0\.0\.1:\d+$/);
      const result = await runScenario(fleet, specs, ['edge-0'], { warmMs: 3_000, settleMs: 1_000, steadyMs: 2_000 });
      writeFileSync(join(workDir, 'report-cluster.json'), `${JSON.stringify(result, null, 2)}\n`);
      process.stdout.write(renderReport('fleet (3-master Redis Cluster)', result));
      // A store: false WebSocket chain meets previous_response_not_found only if its edge was the restarted one.
      expectNoLoss(result, false);
    } finally {
      await fleet.stop();
    }
  }, 600_000);
});
