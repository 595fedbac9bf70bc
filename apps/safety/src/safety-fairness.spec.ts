import { safetyV1 } from '@fastloop/proto';
import {
  callUnary,
  createGrpcClient,
  createLogger,
  createMetricsRegistry,
  MuxClient,
  startGrpcServer,
  type GrpcServer,
} from '@fastloop/service-kit';
import { createSafetyMetrics } from './metrics';
import { createClassifyHandler, createSafetyService } from './safety-service';
import { TenantTurns } from './tenant-turns';
import { awsAccessKeyId } from './testing/fake-secrets';
import { testClassifier } from './testing/test-classifier';

const MB = 1 << 20;
const logger = createLogger({ service: 'safety-test', level: 'silent' });
const request = (tenant: string, text: string): safetyV1.ClassifyRequest => ({
  state: Buffer.alloc(0),
  items: [{ itemType: 'function_call_output', role: '', text, source: safetyV1.ItemSource.ITEM_SOURCE_TOOL }],
  tenant,
  model: 'm',
});
/** Tool output full of fake keys: `count` matches. */
const keyWall = (count: number): string => Array.from({ length: count }, () => awsAccessKeyId()).join('\n');

/**
 * One tenant's expensive calls against another's small ones. The scheduling is shown in process,
 * by order (no timing); the limits over both transports the edge uses (a call each, and calls on
 * one shared ClassifyStream). e2e/src/fairness.e2e.spec.ts shows it between processes.
 */
describe('Classify under one tenant flooding it', () => {
  it("answers a neighbour's call, started while the flood scans, before any of the flood's", async () => {
    const classify = createClassifyHandler({
      classifier: testClassifier({ maxFindings: 256, sliceChars: 1_024, pauseAfterMs: 0 }),
      metrics: createSafetyMetrics(createMetricsRegistry('safety-test')),
      logger,
      turns: new TenantTurns({ queueTimeoutMs: 60_000, maxQueuedPerTenant: 16 }),
    });
    const done: string[] = [];
    const wall = keyWall(5_000); // ~110 KB: ~100 slices each
    const flood = [1, 2, 3].map((i) => classify(request('hostile', wall)).then(() => done.push(`hostile${i}`)));
    // Let the flood take its first turns, then the neighbour arrives.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(done).toEqual([]);
    const neighbour = await classify(request('neighbour', 'ls -la\n'));
    done.push('neighbour');
    expect(neighbour.verdict).toBe(safetyV1.Verdict.VERDICT_ALLOW);
    await Promise.all(flood);
    expect(done[0]).toBe('neighbour');
  });

  it("bounds one tenant's backlog (safety_overloaded, retryable) and serves another tenant meanwhile", async () => {
    const classify = createClassifyHandler({
      classifier: testClassifier({ maxFindings: 16, sliceChars: 1_024, pauseAfterMs: 0 }),
      metrics: createSafetyMetrics(createMetricsRegistry('safety-test')),
      logger,
      turns: new TenantTurns({ queueTimeoutMs: 60_000, maxQueuedPerTenant: 2 }),
    });
    const wall = keyWall(2_000);
    const flood = Array.from({ length: 6 }, () =>
      classify(request('hostile', wall)).then(
        () => 'ok',
        (e: { code?: string; retryable?: boolean }) => `${e.code}:${e.retryable}`,
      ),
    );
    await expect(classify(request('neighbour', 'fine'))).resolves.toMatchObject({
      verdict: safetyV1.Verdict.VERDICT_ALLOW,
    });
    const outcomes = await Promise.all(flood);
    expect(outcomes.filter((o) => o === 'safety_overloaded:true')).toHaveLength(3);
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(3);
  });

  it('stops scanning a call whose caller went away', async () => {
    const classify = createClassifyHandler({
      classifier: testClassifier({ sliceChars: 1_024, pauseAfterMs: 0 }),
      metrics: createSafetyMetrics(createMetricsRegistry('safety-test')),
      logger,
    });
    const controller = new AbortController();
    const running = classify(request('t', keyWall(5_000)), controller.signal);
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    await expect(running).rejects.toThrow(/cancelled/);
  });

  describe('over gRPC', () => {
    let server: GrpcServer;
    let client: safetyV1.SafetyServiceClient;
    let mux: MuxClient<safetyV1.ClassifyRequest, safetyV1.ClassifyResponse>;
    const plain = (r: safetyV1.ClassifyRequest) => callUnary(client.classify, client, r, { deadlineMs: 60_000 });
    const onStream = (r: safetyV1.ClassifyRequest) => mux.unary(r, { deadlineMs: 60_000 });

    beforeAll(async () => {
      server = await startGrpcServer({
        port: 0,
        logger,
        services: [
          createSafetyService({
            classifier: testClassifier({ maxItemBytes: 4 * MB, maxRequestBytes: 8 * MB, maxFindings: 256 }),
            metrics: createSafetyMetrics(createMetricsRegistry('safety-test')),
            logger,
          }),
        ],
      });
      server.health.set(true);
      client = createGrpcClient(safetyV1.SafetyServiceClient, `127.0.0.1:${server.port}`);
      mux = new MuxClient(() => client.classifyStream(), { streams: 1 });
    });

    afterAll(async () => {
      mux.close();
      client.close();
      await server.close(1_000);
    });

    it.each([
      ['a call each', 'plain'],
      ['one shared stream', 'stream'],
    ])('refuses six 3.9 MB tool outputs before scanning, bounds a response, keeps serving (%s)', async (_n, how) => {
      const call = how === 'plain' ? plain : onStream;
      const big = 'x'.repeat(3.9 * MB);
      const six: safetyV1.ClassifyRequest = {
        ...request('hostile', big),
        items: Array.from({ length: 6 }, () => ({
          itemType: 'function_call_output',
          role: '',
          text: big,
          source: safetyV1.ItemSource.ITEM_SOURCE_TOOL,
        })),
      };
      await expect(call(six)).rejects.toMatchObject({ code: 'safety_request_too_large', retryable: false });
      await expect(call(request('hostile', 'y'.repeat(4 * MB + 1)))).rejects.toMatchObject({
        code: 'safety_item_too_large',
        retryable: false,
      });
      // 45,000 findings used to be a ~13 MB answer (149 MB in the report's case): now 256 and a count.
      const walled = await call(request('hostile', keyWall(45_000)));
      expect(walled.verdict).toBe(safetyV1.Verdict.VERDICT_BLOCK);
      expect(walled.findings).toHaveLength(256);
      expect(walled.findingsOmitted).toBe(45_000 - 256);
      expect(safetyV1.ClassifyResponse.encode(walled).finish().length).toBeLessThan(128 * 1024);
      await expect(call(request('neighbour', 'hello'))).resolves.toMatchObject({
        verdict: safetyV1.Verdict.VERDICT_ALLOW,
      });
    });
  });
});
