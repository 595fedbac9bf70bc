import { status as GrpcStatus } from '@grpc/grpc-js';
import { routerV1 } from '@fastloop/proto';
import {
  callUnary,
  createGrpcClient,
  createLogger,
  createMetricsRegistry,
  DomainError,
  MuxClient,
  startGrpcServer,
  type GrpcServer,
  type Registry,
} from '@fastloop/service-kit';
import { loadCatalog } from './catalog';
import { createRouterMetrics } from './metrics';
import { Router } from './router';
import { createRouterService } from './router-service';
import { Fleet } from './fleet/fleet';
import { HashPolicy } from './placement/simple-policies';
import type { WorkerSpec } from './workers';

const logger = createLogger({ service: 'router-test', level: 'silent' });

/** A stand-in inference worker: only grpc.health.v1, whose state the test flips. */
async function startFakeWorker(id: string): Promise<{ spec: WorkerSpec; server: GrpcServer }> {
  const server = await startGrpcServer({ port: 0, services: [], logger });
  server.health.set(true);
  return { spec: { id, address: `127.0.0.1:${server.port}` }, server };
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('RouterService over gRPC', () => {
  let workers: { spec: WorkerSpec; server: GrpcServer }[];
  let fleet: Fleet;
  let server: GrpcServer;
  let client: routerV1.RouterServiceClient;
  let registry: Registry;

  const route = (model: string, affinityKey = '') =>
    callUnary(client.route, client, { model, tenant: 't1', affinityKey, excludeWorkerIds: [] }, { deadlineMs: 5_000 });
  const healthyIds = () => fleet.healthyWorkers().map((w) => w.id);

  beforeAll(async () => {
    workers = await Promise.all(['w-a', 'w-b', 'w-c'].map(startFakeWorker));
    registry = createMetricsRegistry('router-test');
    const metrics = createRouterMetrics(registry);
    fleet = new Fleet({
      healthService: '',
      statsIntervalMs: 25,
      logger,
      onServingChange: (w, healthy) => metrics.workerHealthy.set({ worker: w.id }, healthy ? 1 : 0),
    });
    fleet.setWorkers(
      'static',
      workers.map((w) => w.spec),
    );
    // The hash policy: rendezvous on the affinity key, round robin without one (placement policies
    // have their own tests).
    const router = new Router(loadCatalog(undefined), fleet, new HashPolicy());
    server = await startGrpcServer({ port: 0, logger, services: [createRouterService({ router, metrics, logger })] });
    server.health.set(true);
    client = createGrpcClient(routerV1.RouterServiceClient, `127.0.0.1:${server.port}`);
    await waitFor(() => healthyIds().length === 3, 'all workers SERVING');
  });

  afterAll(async () => {
    client.close();
    fleet.close();
    fleet.close();
    await Promise.all([server, ...workers.map((w) => w.server)].map((s) => s.close(1_000)));
  });

  it('resolves an alias to the canonical model and its limits', async () => {
    const res = await route('gpt-oss-sim');
    expect(res).toMatchObject({
      model: 'fastloop-sim',
      profile: 'harmony-o200k',
      contextWindow: 131072,
      maxOutputTokens: 32768,
      engineModel: 'fastloop-sim',
    });
    expect(workers.map((w) => w.spec.id)).toContain(res.workerId);
    expect(res.workerAddress).toBe(workers.find((w) => w.spec.id === res.workerId)?.spec.address);
  });

  it('answers an unknown model with NOT_FOUND, code model_not_found and the OpenAI message', async () => {
    const err = await route('gpt-9').catch((e: unknown) => e as DomainError);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({
      code: 'model_not_found',
      grpcStatus: GrpcStatus.NOT_FOUND,
      retryable: false,
      message: "The model 'gpt-9' does not exist or you do not have access to it.",
    });
  });

  it('lists the catalog with its fixed created time', async () => {
    const res = await callUnary(client.listModels, client, {}, { deadlineMs: 5_000 });
    expect(res.models).toEqual([
      {
        id: 'fastloop-sim',
        ownedBy: 'fastloop',
        created: 1735689600,
        aliases: ['gpt-oss-sim', 'default'],
        contextWindow: 131072,
        profile: 'harmony-o200k',
        pricing: { inputUsdPerMillion: 0.1, cachedInputUsdPerMillion: 0.01, outputUsdPerMillion: 0.5 },
      },
    ]);
  });

  it('round-robins requests without an affinity key over the healthy workers', async () => {
    const ids = [];
    for (let i = 0; i < 6; i++) ids.push((await route('default')).workerId);
    expect(new Set(ids)).toEqual(new Set(['w-a', 'w-b', 'w-c']));
  });

  it('keeps an affinity key on its worker, fails over while it is NOT_SERVING, and returns after', async () => {
    const keys = Array.from({ length: 16 }, (_, i) => `conv-${i}`);
    const before = new Map<string, string>();
    for (const k of keys) before.set(k, (await route('fastloop-sim', k)).workerId);
    for (const k of keys) expect((await route('fastloop-sim', k)).workerId).toBe(before.get(k));

    const victim = workers.find((w) => w.spec.id === before.get('conv-0'))!;
    victim.server.health.set(false);
    await waitFor(() => !healthyIds().includes(victim.spec.id), 'the victim to leave the pool');
    for (const k of keys) {
      const now = (await route('fastloop-sim', k)).workerId;
      if (before.get(k) === victim.spec.id) expect(now).not.toBe(victim.spec.id);
      else expect(now).toBe(before.get(k)); // only the failed worker's keys move
    }

    victim.server.health.set(true);
    await waitFor(() => healthyIds().includes(victim.spec.id), 'the victim to rejoin');
    for (const k of keys) expect((await route('fastloop-sim', k)).workerId).toBe(before.get(k));
  });

  it('reports the worker health gauge and route decisions in metrics', async () => {
    const text = await registry.metrics();
    expect(text).toMatch(/router_worker_healthy\{worker="w-a",service="router-test"\} 1/);
    expect(text).toMatch(
      /router_route_decisions_total\{model="fastloop-sim",worker="w-[abc]",service="router-test"\} \d+/,
    );
    expect(text).toMatch(/router_route_errors_total\{code="model_not_found",service="router-test"\} 1/);
    expect(text).toContain('router_route_duration_seconds_bucket');
  });

  it('answers on RouteStream as on Route: the same placement, refusals with the same code and status', async () => {
    const mux = new MuxClient(() => client.routeStream(), { streams: 2 });
    try {
      const request = { model: 'gpt-oss-sim', tenant: 't1', affinityKey: 'conv-mux', excludeWorkerIds: [] };
      const plain = await route('gpt-oss-sim', 'conv-mux');
      for (let i = 0; i < 4; i++) expect(await mux.unary(request, { deadlineMs: 5_000 })).toEqual(plain);
      const err = await mux
        .unary({ ...request, model: 'gpt-9' }, { deadlineMs: 5_000 })
        .catch((e: unknown) => e as DomainError);
      expect(err).toBeInstanceOf(DomainError);
      expect(err).toMatchObject({ code: 'model_not_found', grpcStatus: GrpcStatus.NOT_FOUND, retryable: false });
      expect(mux.unsupported).toBe(false);
    } finally {
      mux.close();
    }
  });

  it('answers UNAVAILABLE no_worker_available, retryable, when every worker is down', async () => {
    for (const w of workers) w.server.health.set(false);
    await waitFor(() => healthyIds().length === 0, 'every worker to leave the pool');
    const err = await route('default', 'k').catch((e: unknown) => e as DomainError);
    expect(err).toMatchObject({ code: 'no_worker_available', grpcStatus: GrpcStatus.UNAVAILABLE, retryable: true });
    for (const w of workers) w.server.health.set(true);
    await waitFor(() => healthyIds().length === 3, 'all workers back');
  });

  it('drops a worker whose process stops answering, without waiting for its health watch to end', async () => {
    const gone = workers[2];
    const started = Date.now();
    await gone.server.close(60_000);
    // The server ends its health watches when it closes, so closing does not wait out the grace period.
    expect(Date.now() - started).toBeLessThan(30_000);
    await waitFor(() => !healthyIds().includes(gone.spec.id), 'the stopped worker to leave the pool');
    expect(healthyIds()).toEqual(['w-a', 'w-b']);
  }, 45_000);
});
