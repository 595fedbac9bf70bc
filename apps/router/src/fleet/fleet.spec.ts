import type { ServerWritableStream, UntypedServiceImplementation } from '@grpc/grpc-js';
import { inferenceV1 } from '@fastloop/proto';
import { createLogger, startGrpcServer, type GrpcServer } from '@fastloop/service-kit';
import { CacheAwarePolicy } from '../placement/cache-aware-policy';
import type { PlacementRequest } from '../placement/placement-types';
import { Fleet } from './fleet';

const logger = createLogger({ service: 'router-test', level: 'silent' });

type StatsCall = ServerWritableStream<inferenceV1.WatchWorkerStatsRequest, inferenceV1.WorkerStats>;

/** A stand-in worker: grpc.health.v1 and a WatchWorkerStats whose messages the test writes. */
interface FakeWorker {
  id: string;
  server: GrpcServer;
  streams: Set<StatsCall>;
  send(stats: Partial<inferenceV1.WorkerStats>): void;
}

async function startFakeWorker(id: string): Promise<FakeWorker> {
  const streams = new Set<StatsCall>();
  const implementation = {
    watchWorkerStats: (call: StatsCall) => {
      streams.add(call);
      call.on('cancelled', () => streams.delete(call));
    },
  } as unknown as UntypedServiceImplementation;
  const server = await startGrpcServer({
    port: 0,
    logger,
    services: [
      {
        name: 'fastloop.inference.v1.InferenceService',
        definition: inferenceV1.InferenceServiceService,
        implementation,
      },
    ],
  });
  server.health.set(true);
  return {
    id,
    server,
    streams,
    send: (stats) => {
      for (const s of streams) s.write(inferenceV1.WorkerStats.fromPartial({ workerId: id, ...stats }));
    },
  };
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const load = (inFlight: number, queuedPrefillTokens = 0) =>
  inferenceV1.WorkerLoad.fromPartial({ inFlight, queuedPrefillTokens, maxConcurrency: 64 });
const held = (sessionKey: string, tokens: number, prefixKey = '') => ({
  cacheSalt: 't',
  sessionKey,
  tokens,
  prefixKey,
  rootTokens: tokens,
});

describe('Fleet', () => {
  let workers: FakeWorker[];
  let fleets: Fleet[];

  const newFleet = () => {
    const fleet = new Fleet({ healthService: '', statsIntervalMs: 5, logger });
    fleet.setWorkers(
      'static',
      workers.map((w) => ({ id: w.id, address: `127.0.0.1:${w.server.port}` })),
    );
    fleets.push(fleet);
    return fleet;
  };
  const ids = (fleet: Fleet, exclude?: string[]) => fleet.candidates(exclude).map((c) => c.spec.id);

  beforeEach(async () => {
    fleets = [];
    workers = await Promise.all(['w-a', 'w-b', 'w-c'].map(startFakeWorker));
  });
  afterEach(async () => {
    for (const f of fleets) f.close();
    await Promise.all(workers.map((w) => w.server.close(1_000)));
  });

  it('learns health, load and holdings from the streams each worker pushes', async () => {
    const fleet = newFleet();
    await waitFor(() => ids(fleet).length === 3 && workers.every((w) => w.streams.size === 1), 'three serving workers');
    workers[1].send({ instanceId: 'i1', snapshot: true, load: load(4, 900), kept: [held('resp_1', 1200, 'k:x')] });
    await waitFor(() => fleet.candidates().find((c) => c.spec.id === 'w-b')!.statsKnown, 'w-b stats');
    const b = fleet.candidates().find((c) => c.spec.id === 'w-b')!;
    expect(b).toMatchObject({ load: 4, queuedTokens: 900, maxConcurrency: 64 });
    expect(b.kv.sessionTokens('t', 'resp_1')).toBe(1200);
    expect(ids(fleet, ['w-b'])).toEqual(['w-a', 'w-c']);

    // A restarted worker (new instance) holds nothing the old one reported.
    workers[1].send({ instanceId: 'i2', snapshot: false, load: load(0), kept: [] });
    await waitFor(() => fleet.candidates().find((c) => c.spec.id === 'w-b')!.kv.size === 0, 'w-b view reset');
  });

  it('drops a worker the moment its health says NOT_SERVING, without polling', async () => {
    const fleet = newFleet();
    await waitFor(() => ids(fleet).length === 3, 'three serving workers');
    workers[0].server.health.set(false);
    await waitFor(() => !ids(fleet).includes('w-a'), 'w-a to leave');
    workers[0].server.health.set(true);
    await waitFor(() => ids(fleet).includes('w-a'), 'w-a to return');
  });

  it('counts its own recent decisions on top of a worker report', async () => {
    const fleet = newFleet();
    await waitFor(() => workers.every((w) => w.streams.size === 1), 'stats streams');
    workers[2].send({ instanceId: 'i', snapshot: true, load: load(1) });
    await waitFor(() => fleet.candidates().find((c) => c.spec.id === 'w-c')?.statsKnown === true, 'w-c stats');
    fleet.pending.add('w-c');
    fleet.pending.add('w-c');
    expect(fleet.candidates().find((c) => c.spec.id === 'w-c')!.load).toBe(3);
  });

  it('follows its sources: a listed worker joins, an unlisted one is dropped', async () => {
    const fleet = newFleet();
    await waitFor(() => ids(fleet).length === 3, 'three serving workers');
    fleet.setWorkers('static', [{ id: 'w-a', address: `127.0.0.1:${workers[0].server.port}` }]);
    expect(ids(fleet)).toEqual(['w-a']);
    fleet.setWorkers('dns', [{ id: 'w-c', address: `127.0.0.1:${workers[2].server.port}` }]);
    await waitFor(() => ids(fleet).includes('w-c'), 'w-c from the second source');
    expect(ids(fleet)).toEqual(['w-a', 'w-c']);
  });

  it('lets two routers fed the same reports place every request the same way', async () => {
    const [one, two] = [newFleet(), newFleet()];
    await waitFor(() => workers.every((w) => w.streams.size === 2), 'both routers watching');
    workers[0].send({ instanceId: 'a', snapshot: true, load: load(1, 1000), kept: [held('resp_1', 3000, 'k:x')] });
    workers[1].send({ instanceId: 'b', snapshot: true, load: load(1, 0), kept: [held('resp_2', 800, 'k:y')] });
    workers[2].send({ instanceId: 'c', snapshot: true, load: load(1, 100), kept: [held('resp_3', 9000, 'k:x')] });
    const ready = (f: Fleet) => f.candidates().length === 3 && f.candidates().every((c) => c.statsKnown);
    await waitFor(() => ready(one) && ready(two), 'reports on both routers');
    const policy = new CacheAwarePolicy({ epsilon: 0.25, sessionEpsilon: 0.5, reuseMs: 1000, decodeWeight: 0.05 });
    const requests: PlacementRequest[] = [];
    for (const sessionKey of ['resp_1', 'resp_2', 'resp_3', 'resp_404', ''])
      for (const prefixKey of ['', 'k:x', 'k:y', 'k:new'])
        requests.push({
          affinityKey: '',
          sessionKey,
          cacheSalt: 't',
          sessionWorkerId: '',
          sessionTokens: 0,
          prefixKey,
          serviceTier: '',
          expectedOutputTokens: 0,
        });
    const placeAll = (f: Fleet) => requests.map((r) => policy.place(r, f.candidates()).worker.id);
    const first = placeAll(one);
    expect(placeAll(two)).toEqual(first);
    expect(new Set(first)).toEqual(new Set(['w-a', 'w-b', 'w-c']));
  });
});
