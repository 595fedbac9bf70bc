import { healthV1, inferenceV1 } from '@fastloop/proto';
import { callUnary, createGrpcClient, waitForClientReady } from '@fastloop/service-kit';
import { generate, startTestWorker, type TestWorker } from './testing/test-worker';

const TOKEN = 'internal-token-for-tests-0123456789';

describe('internal gRPC auth (FASTLOOP_INTERNAL_TOKEN)', () => {
  let t: TestWorker;
  beforeAll(async () => {
    t = await startTestWorker({ FASTLOOP_INTERNAL_TOKEN: TOKEN, SIM_ANSWER_WORDS: '3' });
  });
  afterAll(() => t.close());

  const address = () => `127.0.0.1:${t.worker.grpc.port}`;

  it('refuses a Generate call without the token before the worker does any work', async () => {
    await expect(generate(t.client, { tokens: [1, 2, 3] }).result).rejects.toMatchObject({
      code: 'unauthenticated',
      grpcStatus: 16,
    });
    await expect(
      callUnary(t.client.forgetSession, t.client, { sessionKey: 'x', cacheSalt: '' }, { deadlineMs: 2_000 }),
    ).rejects.toMatchObject({ code: 'unauthenticated' });
    expect(t.worker.service.inFlightCount).toBe(0);
  });

  it('refuses a wrong token', async () => {
    const wrong = createGrpcClient(inferenceV1.InferenceServiceClient, address(), {}, 'not-the-token-but-long-enough');
    try {
      await expect(generate(wrong, { tokens: [1, 2, 3] }).result).rejects.toMatchObject({ code: 'unauthenticated' });
    } finally {
      wrong.close();
    }
  });

  it('serves a caller that sends the token', async () => {
    const client = createGrpcClient(inferenceV1.InferenceServiceClient, address(), {}, TOKEN);
    try {
      await waitForClientReady(client, 5_000);
      const { done } = await generate(client, { tokens: [1, 2, 3] }).result;
      expect(done?.promptTokens).toBe(3);
    } finally {
      client.close();
    }
  });

  it('keeps grpc.health.v1 open (Kubernetes probes and the router send no metadata)', async () => {
    const health = createGrpcClient(healthV1.HealthClient, address());
    try {
      const res = await callUnary(health.check, health, { service: '' }, { deadlineMs: 2_000 });
      expect(res.status).toBe(healthV1.HealthCheckResponse_ServingStatus.SERVING);
    } finally {
      health.close();
    }
  });
});
