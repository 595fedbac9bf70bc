import { env, internalTokenSchema, loadConfig, type LoadConfigOptions } from '@fastloop/service-kit';
import { z } from 'zod';
import { DEFAULT_DEDUPE_TTL_SECONDS } from './ledger-store';

/** Billing's configuration; keys are the env var names, every default works locally. */
export const billingConfigSchema = z.object({
  REDIS_URL: z.string().min(1).default('redis://127.0.0.1:6379'),
  /** /healthz, /readyz, /metrics. */
  ADMIN_PORT: env.port(9094),
  /** `GET /v1/usage` report. */
  BILLING_HTTP_PORT: env.port(9095),
  /**
   * Shared service-to-service token: the usage report answers only requests that carry it
   * (`x-fastloop-internal-token`, as the edge sends). Unset = anyone who reaches the port (warned).
   */
  FASTLOOP_INTERNAL_TOKEN: internalTokenSchema,
  BIND_HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: env.logLevel(),
  /** Usage jobs processed at once. */
  BILLING_CONCURRENCY: env.int(16, 1),
  /** How long a response id is remembered as applied (exactly-once window), in seconds. */
  BILLING_DEDUPE_TTL_SECONDS: env.int(DEFAULT_DEDUPE_TTL_SECONDS, 1),
});

export type BillingConfig = Readonly<z.infer<typeof billingConfigSchema>>;

/** Parses the billing configuration once per process (env overrides FASTLOOP_CONFIG_FILE). */
export function loadBillingConfig(options?: LoadConfigOptions): BillingConfig {
  return loadConfig(billingConfigSchema, options);
}
