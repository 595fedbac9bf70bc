import { z } from 'zod';
import { env, internalTokenSchema, loadConfig, type LoadConfigOptions } from '@fastloop/service-kit';
import { parseDnsTarget } from './fleet/dns-workers';
import { POLICY_NAMES } from './placement/create-policy';
import { parseWorkers, type WorkerSpec } from './workers';

/** The worker the router expects when neither INFERENCE_WORKERS nor INFERENCE_WORKERS_DNS is set. */
const DEFAULT_WORKERS = ['sim-0=127.0.0.1:50053'];

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
  /**
   * Comma-separated `id=host:port` or `host:port` (id = address). Default `sim-0=127.0.0.1:50053`,
   * or none when INFERENCE_WORKERS_DNS is set.
   */
  INFERENCE_WORKERS: z.union([z.string(), z.array(z.string())]).optional(),
  /**
   * `name:port` whose A records are workers (a Kubernetes headless Service), re-resolved every
   * ROUTER_DNS_INTERVAL_MS; adds to INFERENCE_WORKERS. Unset = static list only.
   */
  INFERENCE_WORKERS_DNS: z.string().min(1).optional(),
  /** How often INFERENCE_WORKERS_DNS is resolved again, ms. */
  ROUTER_DNS_INTERVAL_MS: env.int(5_000, 100),
  /** DNS servers (`ip` or `ip:port`, comma-separated) for INFERENCE_WORKERS_DNS; default: the system's. */
  ROUTER_DNS_SERVERS: env.list(),
  /** grpc.health.v1 service name watched on workers; default '' (the whole server). */
  ROUTER_HEALTH_SERVICE: z.string().default(''),
  /** Least spacing of each worker's stats messages (WatchWorkerStats), ms. */
  ROUTER_STATS_INTERVAL_MS: env.int(25, 5),
  /** Placement policy: cache-aware (default), round-robin, least-loaded, or hash (rendezvous only). */
  ROUTER_POLICY: z.enum(POLICY_NAMES).default('cache-aware'),
  /** cache-aware: ε of the load bound; no worker takes a call above ⌈(1 + ε) × the mean⌉ running. */
  ROUTER_LOAD_EPSILON: env.number(0.2),
  /**
   * cache-aware: ε up to which a worker keeps the sessions it holds (moving one re-prefills its
   * history, so this is looser than ROUTER_LOAD_EPSILON; never below it).
   */
  ROUTER_SESSION_LOAD_EPSILON: env.number(0.5),
  /** cache-aware: how long the edge keeps a conversation's worker before asking again, ms. */
  ROUTER_REUSE_MS: env.int(1_000, 0),
  /** cache-aware: prefill tokens one running call costs per expected output token of a request. */
  ROUTER_DECODE_WEIGHT: env.number(0.05),
});

export type RouterConfig = Readonly<z.infer<typeof routerConfigSchema>>;

/** Parses the configuration once (env + optional `FASTLOOP_CONFIG_FILE`), workers included. */
export function loadRouterConfig(options?: LoadConfigOptions): { config: RouterConfig; workers: WorkerSpec[] } {
  const config = loadConfig(routerConfigSchema, options);
  if (config.INFERENCE_WORKERS_DNS) parseDnsTarget(config.INFERENCE_WORKERS_DNS);
  const listed = config.INFERENCE_WORKERS;
  const entries =
    listed === undefined
      ? config.INFERENCE_WORKERS_DNS
        ? []
        : DEFAULT_WORKERS
      : (Array.isArray(listed) ? listed : listed.split(',')).map((s) => s.trim()).filter(Boolean);
  return { config, workers: parseWorkers(entries) };
}
