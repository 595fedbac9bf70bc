import { z } from 'zod';
import { env, internalTokenSchema, loadConfig, type LoadConfigOptions } from '@fastloop/service-kit';
import { ACTIONS, CATEGORIES, DEFAULT_ACTIONS, policiesSchema, type Actions } from './policy';

/** `secret=block,injection=flag` (env) or an object (config file) → actions per category. */
const actionsSchema = z
  .string()
  .transform((v) => {
    const out: Record<string, string> = {};
    for (const pair of v
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      const [k, a] = pair.split('=').map((x) => x.trim());
      out[k] = a;
    }
    return out;
  })
  .or(z.record(z.string(), z.string()))
  .pipe(
    z
      .partialRecord(z.enum(CATEGORIES), z.enum(ACTIONS))
      .transform((v): Actions => Object.freeze({ ...DEFAULT_ACTIONS, ...v })),
  )
  .default(DEFAULT_ACTIONS);

/** JSON text (env) or an object (config file). */
const policiesField = z
  .preprocess((v) => {
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return v;
    }
  }, policiesSchema)
  .default({ tenants: {}, models: {} });

/**
 * Development-only HMAC key, used when `SAFETY_STATE_SECRET` is unset (a warning is logged at
 * startup). Anyone who knows it can forge "nothing found so far" states, so set a real secret —
 * the same one on every replica — wherever the edge is reachable by untrusted callers.
 */
export const DEV_STATE_SECRET = 'fastloop-dev-only-safety-state-secret';

/** The safety service's settings; keys are the env var names. */
export const safetyConfigSchema = z.object({
  /** gRPC port (SafetyService + grpc.health.v1). */
  GRPC_PORT: env.port(50051),
  /** /healthz, /readyz, /metrics. */
  ADMIN_PORT: env.port(9091),
  BIND_HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: env.logLevel(),
  /** Shared service-to-service token (x-fastloop-internal-token); unset = any caller (warned). */
  FASTLOOP_INTERNAL_TOKEN: internalTokenSchema,
  /** HMAC-SHA256 key for states; unset → {@link DEV_STATE_SECRET}. Rotating it invalidates carried states. */
  SAFETY_STATE_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Largest item text accepted, in UTF-8 bytes (default 4 MiB); larger items are refused whole. */
  SAFETY_MAX_ITEM_BYTES: env.int(4 * 1024 * 1024, 1),
  /** Largest total item text of one call, in UTF-8 bytes (default 8 MiB); larger calls are refused before scanning. */
  SAFETY_MAX_REQUEST_BYTES: env.int(8 * 1024 * 1024, 1),
  /** Most findings one response lists (default 256; the rest are counted in `findings_omitted`). */
  SAFETY_MAX_FINDINGS: env.int(256, 1),
  /** Characters scanned in one step (default 4,096: ~1 ms); the service lets other calls run every SAFETY_PAUSE_AFTER_MS. */
  SAFETY_SLICE_CHARS: env.int(4_096, 256),
  /** Scanning time after which a call lets other tenants' calls (and socket reads) run (default 2 ms). */
  SAFETY_PAUSE_AFTER_MS: env.int(2, 0),
  /** How long a call may wait behind its own tenant's calls before `safety_overloaded` (default 4,000 ms). */
  SAFETY_QUEUE_TIMEOUT_MS: env.int(4_000, 1),
  /** Calls one tenant may have waiting (default 256); more get `safety_overloaded` at once. */
  SAFETY_MAX_QUEUED_PER_TENANT: env.int(256, 1),
  /**
   * Scanning time one tenant may take per second (default 500 ms: half the service's thread) and in
   * one burst (default 1,000 ms); a tenant over it waits before its next slice. 0: unpaced.
   */
  SAFETY_TENANT_CPU_MS_PER_SECOND: env.int(500, 0),
  SAFETY_TENANT_CPU_BURST_MS: env.int(1_000, 1),
  /** Action per category, overridable per tenant/model in SAFETY_POLICIES (default secret=block,injection=flag,policy=block). */
  SAFETY_ACTIONS: actionsSchema,
  /** Points at which untrusted content (tool output, tool definitions) counts as a prompt injection (default 10). */
  SAFETY_INJECTION_THRESHOLD: env.int(10, 1),
  /** Per-tenant and per-model lists: `{"tenants": {"<t>": {"terms": [], "regexes": [], "actions": {}, "injectionThreshold": n}}, "models": {...}}`. */
  SAFETY_POLICIES: policiesField,
  /** Inference worker serving the policy (guard) model, `host:port`; unset = no guard model. */
  SAFETY_GUARD_ADDRESS: z.string().min(1).optional(),
  /** The guard's engine model name on that worker. */
  SAFETY_GUARD_MODEL: z.string().min(1).default('gpt-oss-safeguard-20b'),
  /** Model profile (tokenizer + chat format) the guard conversation is rendered with; `gguf:<path>` reads a GGUF file. */
  SAFETY_GUARD_PROFILE: z.string().min(1).default('harmony-o200k'),
  /** The policy given to the guard as its instructions (the one-word answer instruction is appended). */
  SAFETY_GUARD_POLICY: z
    .string()
    .min(1)
    .default(
      'Classify each user message against the policy: content that seeks or enables harm, or leaks credentials, is unsafe.',
    ),
  /** Whether tenants and models without their own `guard` setting ask the guard (default false). */
  SAFETY_GUARD_DEFAULT: env.bool(false),
  /** Deadline of one guard call. */
  SAFETY_GUARD_TIMEOUT_MS: env.int(2_000, 1),
  /** true: a guard that fails or times out flags instead of blocking (default fail-closed). */
  SAFETY_GUARD_FAIL_OPEN: env.bool(false),
  /** Tokens the guard may answer with. */
  SAFETY_GUARD_MAX_OUTPUT_TOKENS: env.int(8, 1),
});

export type SafetyConfig = Readonly<z.infer<typeof safetyConfigSchema>>;

/** Parses the configuration once (env + optional `FASTLOOP_CONFIG_FILE`). */
export function loadSafetyConfig(options?: LoadConfigOptions): SafetyConfig {
  return loadConfig(safetyConfigSchema, options);
}

/** The state secret to use, and whether it fell back to the development default. */
export function resolveStateSecret(config: SafetyConfig): { secret: string; defaulted: boolean } {
  return config.SAFETY_STATE_SECRET
    ? { secret: config.SAFETY_STATE_SECRET, defaulted: false }
    : { secret: DEV_STATE_SECRET, defaulted: true };
}
