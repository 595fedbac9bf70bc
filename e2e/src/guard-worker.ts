import { resolve } from 'node:path';
import { ggufProfileId } from '@fastloop/model-profiles';
import { getFreePort, startNodeService, type OwnedProcess } from '@fastloop/service-kit';
import { MetricsText, testModel } from '@fastloop/test-kit';
import { serviceEntry } from './service-entries';

const repoRoot = resolve(__dirname, '../..');
/** The internal token the guard's worker and the file's stack share. */
const TOKEN = 'guard-worker-e2e-internal-token-0123456789';

/**
 * For the calling `describe`: a real guard model on an inference worker of its own (the test model,
 * stories260K, through llama.cpp on one thread), started in `beforeAll` and stopped in `afterAll`.
 * Call it before `stackForThisFile`, and pass that `stackEnv()` from the stack's env function (read
 * once the worker is up). `contextSize` sets the window the guard's sequence grows in
 * (LLAMACPP_CONTEXT_SIZE); default the model's own.
 */
export function guardWorkerForThisFile(options: { contextSize?: number } = {}) {
  const gguf = testModel().path;
  const ports = { grpc: 0, admin: 0 };
  let worker: OwnedProcess | undefined;
  beforeAll(async () => {
    ports.grpc = await getFreePort();
    ports.admin = await getFreePort();
    worker = await startNodeService({
      name: 'guard-inference',
      entry: serviceEntry('inference'),
      cwd: repoRoot,
      env: {
        ...process.env,
        INFERENCE_ENGINE: 'llamacpp',
        LLAMACPP_MODEL_PATH: gguf,
        LLAMACPP_THREADS: '1',
        ...(options.contextSize === undefined ? {} : { LLAMACPP_CONTEXT_SIZE: String(options.contextSize) }),
        WORKER_ID: 'guard-0',
        GRPC_PORT: String(ports.grpc),
        ADMIN_PORT: String(ports.admin),
        FASTLOOP_INTERNAL_TOKEN: TOKEN,
        LOG_LEVEL: 'warn',
      },
      readyUrl: `http://127.0.0.1:${ports.admin}/readyz`,
    });
  }, 300_000);
  afterAll(async () => {
    await worker?.stop(5_000);
  });
  return {
    /** The stack's settings that make this worker safety's guard for every tenant. */
    stackEnv: (): Record<string, string> => ({
      FASTLOOP_INTERNAL_TOKEN: TOKEN,
      SAFETY_GUARD_ADDRESS: `127.0.0.1:${ports.grpc}`,
      SAFETY_GUARD_PROFILE: ggufProfileId(gguf),
      SAFETY_GUARD_MODEL: 'stories260K',
      SAFETY_GUARD_POLICY: 'Judge the story.',
      SAFETY_GUARD_MAX_OUTPUT_TOKENS: '16',
      SAFETY_GUARD_TIMEOUT_MS: '20000',
      SAFETY_GUARD_DEFAULT: 'true',
      // Its meaningless `unsafe` flags instead of blocking, so the conversation goes on.
      SAFETY_ACTIONS: 'policy=flag',
    }),
    /**
     * The worker's own token meters (it serves only the guard): tokens llama.cpp evaluated, and
     * tokens it reused from its KV cache. A meter the page does not declare throws (MetricsText);
     * a declared one with no series yet (no call so far) is 0.
     */
    async tokens(): Promise<{ evaluated: number; cached: number }> {
      const page = new MetricsText(await (await fetch(`http://127.0.0.1:${ports.admin}/metrics`)).text());
      return {
        evaluated: page.value('inference_engine_evaluated_tokens_total'),
        cached: page.value('inference_cached_tokens_total'),
      };
    },
  };
}
