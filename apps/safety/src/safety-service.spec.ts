import { safetyV1 } from '@fastloop/proto';
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
import { status as GrpcStatus } from '@grpc/grpc-js';
import { createSafetyMetrics } from './metrics';
import { createSafetyService } from './safety-service';
import { awsAccessKeyId } from './testing/fake-secrets';
import { testClassifier } from './testing/test-classifier';

describe('SafetyService over gRPC', () => {
  let server: GrpcServer;
  let client: safetyV1.SafetyServiceClient;
  let registry: Registry;

  const classify = (request: Partial<safetyV1.ClassifyRequest>) =>
    callUnary(
      client.classify,
      client,
      { state: Buffer.alloc(0), items: [], tenant: 't1', model: 'm', ...request },
      { deadlineMs: 5_000 },
    );

  beforeAll(async () => {
    const logger = createLogger({ service: 'safety-test', level: 'silent' });
    registry = createMetricsRegistry('safety-test');
    const classifier = testClassifier();
    server = await startGrpcServer({
      port: 0,
      logger,
      services: [createSafetyService({ classifier, metrics: createSafetyMetrics(registry), logger })],
    });
    server.health.set(true);
    client = createGrpcClient(safetyV1.SafetyServiceClient, `127.0.0.1:${server.port}`);
  });

  afterAll(async () => {
    client.close();
    await server.close(1_000);
  });

  it('carries the verdict across calls through the returned state', async () => {
    const first = await classify({
      items: [
        {
          itemType: 'function_call_output',
          role: '',
          text: `id=${awsAccessKeyId()} `,
          source: safetyV1.ItemSource.ITEM_SOURCE_TOOL,
        },
      ],
    });
    expect(first.verdict).toBe(safetyV1.Verdict.VERDICT_BLOCK);
    const second = await classify({
      state: first.state,
      items: [{ itemType: 'message', role: 'user', text: 'thanks', source: safetyV1.ItemSource.ITEM_SOURCE_INPUT }],
    });
    expect(second).toMatchObject({ verdict: safetyV1.Verdict.VERDICT_BLOCK, itemsSeen: 2 });
    expect(second.findings[0]).toMatchObject({ ruleId: 'aws-access-key-id', itemIndex: 0 });
  });

  it('answers a tampered state with INVALID_ARGUMENT and code invalid_safety_state', async () => {
    const ok = await classify({
      items: [{ itemType: 'message', role: 'user', text: 'hi', source: safetyV1.ItemSource.ITEM_SOURCE_INPUT }],
    });
    const tampered = Buffer.from(ok.state);
    tampered[5] ^= 1;
    const err = await classify({ state: tampered }).catch((e: unknown) => e as DomainError);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('invalid_safety_state');
    expect((err as DomainError).grpcStatus).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect((err as DomainError).retryable).toBe(false);
  });

  it('counts classifications by verdict and the items it scanned', async () => {
    await classify({
      items: [
        { itemType: 'message', role: 'user', text: 'a', source: safetyV1.ItemSource.ITEM_SOURCE_INPUT },
        { itemType: 'message', role: 'user', text: 'b', source: safetyV1.ItemSource.ITEM_SOURCE_INPUT },
      ],
    });
    const text = await registry.metrics();
    expect(text).toMatch(/safety_classifications_total\{verdict="allow",service="safety-test"\} \d+/);
    expect(text).toMatch(/safety_classifications_total\{verdict="error",service="safety-test"\} 1/);
    expect(text).toMatch(/safety_items_scanned_total\{service="safety-test"\} \d+/);
    expect(text).toMatch(/safety_findings_total\{rule_id="aws-access-key-id",action="block",service="safety-test"\} 1/);
    expect(text).toContain('safety_classify_duration_seconds_bucket');
  });

  it('moderates a response on a ModerateStream session: no state per batch, the answers of Classify calls', async () => {
    const mux = new MuxClient<safetyV1.ClassifyRequest, safetyV1.ClassifyResponse, safetyV1.ModerateBatch>(() =>
      client.moderateStream(),
    );
    const out = (text: string) => ({
      itemType: 'output_text',
      role: 'assistant',
      text,
      source: safetyV1.ItemSource.ITEM_SOURCE_MODEL,
    });
    const input = await classify({ items: [{ itemType: 'message', role: 'user', text: 'hi', source: 1 }] });
    const batches = ['Here is the plan: ', 'the tok', 'en is gh', 'p_ not really, ', 'all done.'];
    try {
      const session = mux.session(
        { state: input.state, items: [out(batches[0])], tenant: 't1', model: 'm', output: { final: false } },
        { deadlineMs: 5_000 },
      );
      const viaSession = [await session.first];
      for (const [i, text] of batches.slice(1).entries())
        viaSession.push(await session.send({ text, final: i === batches.length - 2 }));
      let state = input.state;
      const viaCalls: safetyV1.ClassifyResponse[] = [];
      for (const [i, text] of batches.entries()) {
        const res = await classify({ state, items: [out(text)], output: { final: i === batches.length - 1 } });
        viaCalls.push(res);
        state = res.state;
      }
      const strip = (r: safetyV1.ClassifyResponse) => ({ ...r, state: undefined });
      expect(viaSession.map(strip)).toEqual(viaCalls.map(strip));
      expect(viaSession.map((r) => r.heldChars)).toEqual([0, 3, 2, 0, 0]);
      // Only the final answer carries the state (the next turn goes on from it).
      expect(viaSession.map((r) => r.state.length > 0)).toEqual([false, false, false, false, true]);
      expect(Buffer.from(viaSession[4].state).equals(Buffer.from(viaCalls[4].state))).toBe(true);
      expect(mux.activeCalls).toBe(0); // the final answer ended the call
    } finally {
      mux.close();
    }
  });
});
