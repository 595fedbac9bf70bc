import type { ClientReadableStream } from '@grpc/grpc-js';
import { inferenceV1 } from '@fastloop/proto';
import { createGrpcClient, createLogger, fromGrpcError, Registry, waitForClientReady } from '@fastloop/service-kit';
import { registryMetricValue } from '@fastloop/test-kit';
import { loadInferenceConfig } from '../config';
import type { Engine } from '../engine';
import { startInferenceWorker, type InferenceWorker } from '../inference-worker';

/** A worker on 127.0.0.1:0 with its generated client, for tests. */
export interface TestWorker {
  worker: InferenceWorker;
  client: inferenceV1.InferenceServiceClient;
  registry: Registry;
  close(): Promise<void>;
}

/** A fast simulated accelerator unless `env` says otherwise. */
export async function startTestWorker(env: Record<string, string> = {}, engine?: Engine): Promise<TestWorker> {
  const config = loadInferenceConfig({
    env: {
      GRPC_PORT: '0',
      SIM_TTFT_MS: '0',
      SIM_TOKENS_PER_SECOND: '1000000',
      SIM_PREFILL_TOKENS_PER_SECOND: '1000000000',
      ...env,
    },
  });
  const registry = new Registry();
  const logger = createLogger({ service: 'inference-test', level: 'silent' });
  const worker = await startInferenceWorker({ config, logger, registry, engine });
  worker.grpc.health.set(true);
  const client = createGrpcClient(inferenceV1.InferenceServiceClient, `127.0.0.1:${worker.grpc.port}`);
  await waitForClientReady(client, 5_000);
  return {
    worker,
    client,
    registry,
    close: async () => {
      client.close();
      await worker.close(1_000);
    },
  };
}

/** What one Generate call returned. */
export interface GenerateResult {
  chunks: number[][];
  /** Each chunk's engine_elapsed_ms. */
  elapsedMs: number[];
  tokens: number[];
  done?: inferenceV1.GenerateDone;
}

/** Starts a Generate call and collects its stream; failures reject with a DomainError. */
export function generate(
  client: inferenceV1.InferenceServiceClient,
  request: Partial<inferenceV1.GenerateRequest>,
  deadlineMs = 10_000,
): { call: ClientReadableStream<inferenceV1.GenerateResponse>; result: Promise<GenerateResult> } {
  const call = client.generate(inferenceV1.GenerateRequest.fromPartial(request), { deadline: Date.now() + deadlineMs });
  const result = new Promise<GenerateResult>((resolve, reject) => {
    const out: GenerateResult = { chunks: [], elapsedMs: [], tokens: [] };
    call.on('data', (res: inferenceV1.GenerateResponse) => {
      if (res.event?.$case === 'chunk') {
        out.chunks.push(res.event.value.tokens);
        out.elapsedMs.push(res.event.value.engineElapsedMs);
        out.tokens.push(...res.event.value.tokens);
      } else if (res.event?.$case === 'done') {
        out.done = res.event.value;
      }
    });
    call.on('error', (err) => reject(fromGrpcError(err)));
    call.on('end', () => resolve(out));
  });
  return { call, result };
}

/** Polls `predicate` until true (tests never assert on speed, only on eventual state). */
export async function eventually(predicate: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Current value of a counter/gauge in `registry` (summed over matching series); a missing metric throws. */
export const metricValue = registryMetricValue;
