import { randomBytes } from 'node:crypto';
import { getFreePort } from '@fastloop/service-kit';

/** The five services, in no particular order. */
export const SERVICE_NAMES = ['safety', 'router', 'inference', 'billing', 'edge'] as const;

/** One of the stack's services. */
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** Entry files relative to the repository root, run with `node --import tsx <file>`. */
export const SERVICE_ENTRIES: Readonly<Record<ServiceName, string>> = {
  safety: 'apps/safety/src/main.ts',
  router: 'apps/router/src/main.ts',
  inference: 'apps/inference/src/main.ts',
  billing: 'apps/billing/src/main.ts',
  edge: 'apps/edge/src/main.ts',
};

/**
 * What each service is started after (once those are ready); the others start at once, as a
 * Deployment's pods do, and wait for their upstreams themselves (the edge asks the router for its
 * model catalog until it answers: EDGE_STARTUP_CATALOG_WAIT_MS). The router starts once its workers
 * are ready, so that it sees them serving when it reports ready (its health watch of a worker not up
 * yet backs off up to 1 s, and a model worker may load for seconds). One start in phases took 6.8–8.7 s
 * on two cores, this one 5.5–5.9 s (the edge's tokenizer tables build while the workers load).
 */
export const START_AFTER: Readonly<Record<ServiceName, readonly ServiceName[]>> = {
  safety: [],
  inference: [],
  billing: [],
  router: ['inference'],
  edge: [],
};

/** Stop order: the edge first so it drains in-flight turns and flushes usage while upstreams still answer. */
export const STOP_ORDER: readonly ServiceName[] = ['edge', 'billing', 'inference', 'router', 'safety'];

/** One process of the stack: a service, or one more inference worker (`inference-1`, …). */
export type InstanceName = ServiceName | `inference-${number}`;

/** The process name of inference worker `index` (the first is plain `inference`). */
export function workerInstance(index: number): InstanceName {
  return index === 0 ? 'inference' : `inference-${index}`;
}

/** The worker id of inference worker `index`, as the router lists it. */
export function workerId(index: number): string {
  return `sim-${index}`;
}

/** Which service a process runs, and for a worker its index. */
export function instanceKind(name: InstanceName): { service: ServiceName; worker: number } {
  const m = /^inference-(\d+)$/.exec(name);
  return m ? { service: 'inference', worker: Number(m[1]) } : { service: name as ServiceName, worker: 0 };
}

/** The processes of a group of services (e.g. STOP_ORDER), with `inference` standing for every worker. */
export function expandInstances(names: readonly ServiceName[], workers: number): InstanceName[] {
  return names.flatMap((n) => (n === 'inference' ? Array.from({ length: workers }, (_, i) => workerInstance(i)) : [n]));
}

/** The key the launcher configures when the user has not set FASTLOOP_API_KEYS. */
export const DEV_API_KEY = 'sk-fastloop-dev';

/** Ports of one service: `admin` serves /healthz, /readyz, /metrics; `grpc` and `http` its traffic. */
export interface ServicePorts {
  readonly admin: number;
  readonly grpc?: number;
  readonly http?: number;
}

/**
 * Every port of the stack; the edge's `http` is the public port. `inference` is the first worker's;
 * `moreWorkers` holds those of workers 1, 2, … (`--workers`).
 */
export type StackPorts = Readonly<Record<ServiceName, ServicePorts>> & {
  readonly moreWorkers?: readonly ServicePorts[];
};

/** The ports of a process of the stack. */
export function portsOf(ports: StackPorts, name: InstanceName): ServicePorts {
  const { service, worker } = instanceKind(name);
  return service === 'inference' && worker > 0 ? ports.moreWorkers![worker - 1] : ports[service];
}

/**
 * Picks distinct free loopback ports for every internal listener. `publicPort` (already resolved,
 * never 0) is reserved for the edge's HTTP/WebSocket listener.
 */
export async function allocatePorts(
  publicPort: number,
  getPort: () => Promise<number> = getFreePort,
  workers = 1,
): Promise<StackPorts> {
  const taken = new Set<number>([publicPort]);
  const next = async (): Promise<number> => {
    // The OS may hand back a port it just gave us (we close each probe socket); retry until new.
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = await getPort();
      if (!taken.has(port)) {
        taken.add(port);
        return port;
      }
    }
    throw new Error('could not find enough distinct free ports');
  };
  const ports = {
    safety: { grpc: await next(), admin: await next() },
    router: { grpc: await next(), admin: await next() },
    inference: { grpc: await next(), admin: await next() },
    billing: { http: await next(), admin: await next() },
    edge: { http: publicPort, grpc: await next(), admin: await next() },
  };
  const moreWorkers: ServicePorts[] = [];
  for (let i = 1; i < workers; i++) moreWorkers.push({ grpc: await next(), admin: await next() });
  return workers > 1 ? { ...ports, moreWorkers } : ports;
}

/** Variables the launcher owns: never inherited from the caller's environment, always set per service. */
export const LAUNCHER_OWNED_ENV = [
  'GRPC_PORT',
  'ADMIN_PORT',
  'PORT',
  'EDGE_GRPC_PORT',
  'BILLING_HTTP_PORT',
  'INFERENCE_WORKERS',
  'WORKER_ID',
  'SAFETY_ADDRESS',
  'ROUTER_ADDRESS',
  'BILLING_URL',
] as const;

/**
 * The internal gRPC token of this launcher run, generated once, unless the caller set
 * FASTLOOP_INTERNAL_TOKEN (then that one, inherited like any variable).
 */
const RUN_INTERNAL_TOKEN = randomBytes(24).toString('base64url');

/** The internal token a stack built on `base` uses: the caller's FASTLOOP_INTERNAL_TOKEN, else this run's. */
export function internalTokenOf(base: Readonly<Record<string, string | undefined>>): string {
  return base.FASTLOOP_INTERNAL_TOKEN || RUN_INTERNAL_TOKEN;
}

/** What every service's environment is assembled from. */
export interface EnvInputs {
  /** The caller's environment with `options.env` applied on top (so PATH, SIM_* etc. pass through). */
  readonly base: Readonly<Record<string, string | undefined>>;
  readonly ports: StackPorts;
  readonly redisUrl: string;
  readonly logLevel: string;
  readonly bindHost: string;
  readonly apiKeys: string;
  /** Inference workers in the stack (default 1). */
  readonly workers?: number;
}

/**
 * The complete environment for one service: the inherited base minus launcher-owned variables,
 * the shared `ADMIN_PORT`/`BIND_HOST`/`LOG_LEVEL`, and the service's own wiring.
 */
export function buildServiceEnv(instance: InstanceName, inputs: EnvInputs): Record<string, string> {
  const { service: name, worker } = instanceKind(instance);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(inputs.base)) {
    if (value !== undefined && !(LAUNCHER_OWNED_ENV as readonly string[]).includes(key)) env[key] = value;
  }
  const { ports } = inputs;
  const own = portsOf(ports, instance);
  Object.assign(env, { ADMIN_PORT: String(own.admin), BIND_HOST: inputs.bindHost, LOG_LEVEL: inputs.logLevel });
  env.FASTLOOP_INTERNAL_TOKEN = internalTokenOf(inputs.base);
  const local = (port: number | undefined) => `127.0.0.1:${port}`;
  switch (name) {
    case 'safety':
      // `SAFETY_GUARD_ADDRESS=inference`: the stack's own inference worker serves the guard model too.
      if (env.SAFETY_GUARD_ADDRESS === 'inference') env.SAFETY_GUARD_ADDRESS = local(ports.inference.grpc);
      return { ...env, GRPC_PORT: String(own.grpc) };
    case 'router':
      return {
        ...env,
        GRPC_PORT: String(own.grpc),
        INFERENCE_WORKERS: Array.from(
          { length: inputs.workers ?? 1 },
          (_, i) => `${workerId(i)}=${local(portsOf(ports, workerInstance(i)).grpc)}`,
        ).join(','),
      };
    case 'inference':
      return { ...env, GRPC_PORT: String(own.grpc), WORKER_ID: workerId(worker) };
    case 'billing':
      return { ...env, REDIS_URL: inputs.redisUrl, BILLING_HTTP_PORT: String(own.http) };
    case 'edge':
      return {
        ...env,
        PORT: String(own.http),
        EDGE_GRPC_PORT: String(own.grpc),
        SAFETY_ADDRESS: local(ports.safety.grpc),
        ROUTER_ADDRESS: local(ports.router.grpc),
        REDIS_URL: inputs.redisUrl,
        FASTLOOP_API_KEYS: inputs.apiKeys,
        BILLING_URL: `http://${local(ports.billing.http)}`,
      };
  }
}

/** The API keys to configure: the user's FASTLOOP_API_KEYS when set and non-blank, else the dev key. */
export function resolveApiKeys(base: Readonly<Record<string, string | undefined>>): { keys: string; first: string } {
  const keys = (base.FASTLOOP_API_KEYS ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k.length > 0);
  // Entries may be `key:tenant` (see apps/edge/src/auth.ts); the usable key is the part before the tenant.
  const first = keys.length > 0 ? keys[0].replace(/:[^:]*$/, '') : DEV_API_KEY;
  return keys.length > 0 ? { keys: keys.join(','), first } : { keys: DEV_API_KEY, first };
}

/** The address to probe a listener bound to `bindHost` on: wildcard binds are reached on loopback. */
export function probeHost(bindHost: string): string {
  if (bindHost === '0.0.0.0' || bindHost === '::' || bindHost === '') return '127.0.0.1';
  return bindHost.includes(':') ? `[${bindHost}]` : bindHost;
}
