import { z } from 'zod';
import { env, internalTokenSchema, loadConfig, type LoadConfigOptions } from '@fastloop/service-kit';

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
});

export type SafetyConfig = Readonly<z.infer<typeof safetyConfigSchema>>;

/** Parses the configuration once (env + optional `FASTLOOP_CONFIG_FILE`). */
export function loadSafetyConfig(options?: LoadConfigOptions): SafetyConfig {
  return loadConfig(safetyConfigSchema, options);
}

/** The state secret to use, and whether it fell back to the development default. */
export function resolveStateSecret(config: SafetyConfig): { secret: string; defaulted: boolean } {
  return config.SAFETY_STATE_SECRET ? { secret: config.SAFETY_STATE_SECRET, defaulted: false } : { secret: DEV_STATE_SECRET, defaulted: true };
}
