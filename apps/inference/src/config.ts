import { z } from 'zod';
import { DEFAULT_PROFILE_ID, ggufProfileId } from '@fastloop/model-profiles';
import { ConfigError, env, internalTokenSchema, loadConfig, type LoadConfigOptions } from '@fastloop/service-kit';
import { DIALECTS } from './engines/openai-compatible/dialects';
import { DEFAULT_MAX_CHUNK_TOKENS } from './token-chunk-writer';

/** Engines this worker can run: the simulated accelerator, llama.cpp in-process, or an upstream server. */
export const ENGINE_NAMES = ['sim', 'llamacpp', 'openai-compatible'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

/** JSON text (env) or an object (config file): tenant name → weight and cap. */
const tenantSharesField = z
  .preprocess(
    (v) => (typeof v === 'string' ? (JSON.parse(v) as unknown) : v),
    z.record(
      z.string().min(1),
      z.strictObject({ weight: z.number().positive().optional(), maxConcurrent: z.number().int().min(1).optional() }),
    ),
  )
  .default({});

/**
 * Every knob of the inference worker. Keys are the env var names; each default works locally.
 * Parsed once by {@link loadInferenceConfig}, frozen, and passed in.
 */
export const inferenceConfigSchema = z.object({
  /** gRPC port for InferenceService and grpc.health.v1. */
  GRPC_PORT: env.port(50053),
  /** Port for /healthz, /readyz, /metrics. */
  ADMIN_PORT: env.port(9093),
  BIND_HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: env.logLevel(),
  /** Shared service-to-service token (x-fastloop-internal-token); unset = any caller (warned). */
  FASTLOOP_INTERNAL_TOKEN: internalTokenSchema,
  /** Name of this worker in logs and metrics. */
  WORKER_ID: z.string().min(1).default('sim-0'),
  /** Engine behind the worker; `sim` is a simulated accelerator, `llamacpp` runs LLAMACPP_MODEL_PATH. */
  INFERENCE_ENGINE: z.enum(ENGINE_NAMES).default('sim'),
  /**
   * Model profile (tokenizer + chat format) the engine speaks. Default: `harmony-o200k` for sim,
   * `gguf:<LLAMACPP_MODEL_PATH>` (the model file's own tokenizer and template) for llamacpp.
   */
  INFERENCE_PROFILE: z.string().min(1).optional(),
  /** llamacpp: the GGUF model file. Required with INFERENCE_ENGINE=llamacpp. */
  LLAMACPP_MODEL_PATH: z.string().min(1).optional(),
  /** llamacpp: KV sequences kept (sessions whose state is reused); the least recently used is reused beyond. */
  LLAMACPP_SEQUENCES: env.int(4, 1),
  /** llamacpp: context size per sequence; 0 = what the model was trained with. */
  LLAMACPP_CONTEXT_SIZE: env.int(0, 0),
  /** llamacpp: CPU threads (1 on small shared machines: more threads slow llama.cpp down there). */
  LLAMACPP_THREADS: env.int(1, 1),
  /** llamacpp: layers offloaded to a GPU node-llama-cpp finds (CUDA/Vulkan/Metal); 0 = CPU only. */
  LLAMACPP_GPU_LAYERS: env.int(0, 0),
  /** openai-compatible: base URL of the upstream (vLLM, SGLang or llama-server). Required with that engine. */
  OPENAI_COMPAT_URL: z.url().optional(),
  /** openai-compatible: which token-id API the upstream speaks. */
  OPENAI_COMPAT_DIALECT: z.enum(DIALECTS).default('vllm'),
  /** openai-compatible: the model name the upstream serves (vLLM's `model`). */
  OPENAI_COMPAT_MODEL: z.string().min(1).default('default'),
  /** openai-compatible: llama-server slots a session is pinned to by its key; 0 = the server picks. */
  OPENAI_COMPAT_SLOTS: env.int(0, 0),
  /** openai-compatible: how often the upstream's `/health` is checked; NOT_SERVING while it fails. */
  INFERENCE_ENGINE_HEALTH_INTERVAL_MS: env.int(5_000, 100),
  /**
   * Draining: after NOT_SERVING the worker keeps taking calls until none arrived for this long (the
   * routers' health checks have seen it), at most INFERENCE_DRAIN_QUIET_MAX_MS; then it refuses new
   * ones and finishes the rest. Above the router's ROUTER_HEALTH_INTERVAL_MS (1 s) plus its timeout.
   */
  INFERENCE_DRAIN_QUIET_MS: env.int(1_500, 0),
  INFERENCE_DRAIN_QUIET_MAX_MS: env.int(5_000, 0),
  /** openai-compatible: bearer token for the upstream, if it wants one. */
  OPENAI_COMPAT_API_KEY: z.string().min(1).optional(),
  /** Calls generating at once (slots); more wait up to INFERENCE_SLOT_WAIT_MS, then `worker_overloaded`. */
  INFERENCE_MAX_CONCURRENCY: env.int(64, 1),
  /** How long a call may wait for a generation slot before `worker_overloaded` (retryable); 0 = fail at once. */
  INFERENCE_SLOT_WAIT_MS: env.int(1_000, 0),
  /** Slots no single tenant may take (default an eighth of INFERENCE_MAX_CONCURRENCY, at least 1). */
  INFERENCE_SLOT_RESERVE: env.int(-1, -1),
  /**
   * Per-tenant shares of the slots, by tenant name (the worker digests them as the edge digests
   * `cache_salt`): `{"<tenant>": {"weight": 2, "maxConcurrent": 16}}` (JSON).
   */
  INFERENCE_TENANT_SHARES: tenantSharesField,
  /** Upper bound on sampled tokens per call, applied when a request asks for 0 (unset) or more. */
  INFERENCE_MAX_OUTPUT_TOKENS: env.int(32_768, 1),
  /**
   * Tokens per TokenChunk message at most. Also how many sampled tokens the worker holds while a
   * caller's stream does not drain (they leave as one message when it does); past it the engine
   * waits for the caller.
   */
  INFERENCE_MAX_CHUNK_TOKENS: env.int(DEFAULT_MAX_CHUNK_TOKENS, 1),
  /** Total tokens of all session sequences held for prefix reuse (LRU evicts beyond it). */
  INFERENCE_SESSION_CACHE_TOKENS: env.int(4_000_000, 0),
  /** Number of sessions held for prefix reuse (LRU evicts beyond it). */
  INFERENCE_SESSION_CACHE_ENTRIES: env.int(10_000, 0),
  /**
   * Content-addressed prefix caching (vLLM's automatic prefix caching): any held sequence that
   * shares the prompt's prefix counts as cached, not only the caller's session. false: only the
   * session's own prefix is reused, as in an engine without prefix caching.
   */
  INFERENCE_PREFIX_CACHING: env.bool(true),
  /** Simulated accelerator: base time to first token, in ms. */
  SIM_TTFT_MS: env.number(50),
  /** Simulated accelerator: prefill speed for prompt tokens not held in the session cache. */
  SIM_PREFILL_TOKENS_PER_SECOND: z.coerce.number().positive().default(20_000),
  /**
   * Simulated accelerator: one prefill queue for the worker (first come, first served at
   * SIM_PREFILL_TOKENS_PER_SECOND), as one GPU has, instead of every call prefilling at that rate
   * at once. What makes a busy worker slower, for routing benchmarks.
   */
  SIM_SHARED_PREFILL: env.bool(false),
  /** Simulated accelerator: decode speed. */
  SIM_TOKENS_PER_SECOND: z.coerce.number().positive().default(1_000),
  /** Simulated accelerator: relative spread of each interval, 0 (exact) to 1. */
  SIM_JITTER: z.coerce.number().min(0).max(1).default(0),
  /** Simulated accelerator: tool calls it makes after a user message before it answers. */
  SIM_TOOL_CALLS: env.int(2, 0),
  /** Simulated accelerator: words in its final answer. */
  SIM_ANSWER_WORDS: env.int(40, 1),
  /**
   * Simulated accelerator playing a policy (guard) model: comma-separated, case-insensitive terms that
   * make its verdict `unsafe` when a guard prompt's new messages contain one (default none: `safe`).
   */
  SIM_GUARD_BLOCK_TERMS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t.length > 0),
    ),
});

export type InferenceConfig = Readonly<z.infer<typeof inferenceConfigSchema>>;

/** The profile id the worker speaks (INFERENCE_PROFILE, else the engine's default). */
export function profileIdOf(
  config: Pick<InferenceConfig, 'INFERENCE_ENGINE' | 'INFERENCE_PROFILE' | 'LLAMACPP_MODEL_PATH'>,
): string {
  if (config.INFERENCE_PROFILE) return config.INFERENCE_PROFILE;
  return config.INFERENCE_ENGINE === 'llamacpp' && config.LLAMACPP_MODEL_PATH
    ? ggufProfileId(config.LLAMACPP_MODEL_PATH)
    : DEFAULT_PROFILE_ID;
}

/** Loads and validates the worker's configuration; a bad value throws ConfigError naming the field. */
export function loadInferenceConfig(options: LoadConfigOptions = {}): InferenceConfig {
  const config = loadConfig(inferenceConfigSchema, options);
  if (config.INFERENCE_ENGINE === 'openai-compatible' && !config.OPENAI_COMPAT_URL) {
    throw new ConfigError('invalid configuration: OPENAI_COMPAT_URL: required with INFERENCE_ENGINE=openai-compatible');
  }
  if (config.INFERENCE_ENGINE === 'llamacpp' && !config.LLAMACPP_MODEL_PATH) {
    throw new ConfigError(
      'invalid configuration: LLAMACPP_MODEL_PATH: required with INFERENCE_ENGINE=llamacpp (a GGUF model file)',
    );
  }
  return config;
}
