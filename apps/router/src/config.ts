import { z } from 'zod';
import { env, internalTokenSchema, loadConfig, type LoadConfigOptions } from '@fastloop/service-kit';
import { parseWorkers, type WorkerSpec } from './workers';

/** The router's settings; keys are the env var names. */
export const routerConfigSchema = z.object({
  /** gRPC port (RouterService + grpc.health.v1). */
  GRPC_PORT: env.port(50052),
  /** /healthz, /readyz, /metrics. */
  ADMIN_PORT: env.port(9092),
  BIND_HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: env.logLevel(),
  /** Shared service-to-service token (x-fastloop-internal-token); unset = any caller (warned). */
  FASTLOOP_INTERNAL_TOKEN: internalTokenSchema,
  /** JSON model catalog; unset → the embedded apps/router/catalog.default.json. */
  ROUTER_CATALOG_FILE: z.string().min(1).optional(),
  /** Comma-separated `id=host:port` or `host:port` (id = address). */
  INFERENCE_WORKERS: env.list(['sim-0=127.0.0.1:50053']),
  /** Pause between health checks of one worker, ms (default 1000). */
  ROUTER_HEALTH_INTERVAL_MS: env.int(1_000, 10),
  /** Deadline of one health check, ms (default 500); a slower answer counts as not serving. */
  ROUTER_HEALTH_TIMEOUT_MS: env.int(500, 1),
  /** grpc.health.v1 service name checked on workers; default '' (the whole server). */
  ROUTER_HEALTH_SERVICE: z.string().default(''),
});

export type RouterConfig = Readonly<z.infer<typeof routerConfigSchema>>;

/** Parses the configuration once (env + optional `FASTLOOP_CONFIG_FILE`), workers included. */
export function loadRouterConfig(options?: LoadConfigOptions): { config: RouterConfig; workers: WorkerSpec[] } {
  const config = loadConfig(routerConfigSchema, options);
  return { config, workers: parseWorkers(config.INFERENCE_WORKERS) };
}
