import { isAbsolute, join, resolve } from 'node:path';
import { defaultReadyTimeoutMs, type WaitingFor } from '@fastloop/service-kit';
import type { RestartPolicyOptions } from './restart-policy';
import type { StackStartError } from './stack-errors';
import type { ServiceRestart } from './stack-supervisor';
import { SERVICE_ENTRIES, SERVICE_NAMES, type InstanceName, type ServiceName } from './service-specs';

/** Options of startStack. Every field is optional; the defaults give a working local stack. */
export interface StackOptions {
  /**
   * The edge's public HTTP/WebSocket port. Default: `PORT` from `env`/process.env, else 8080.
   * 0 picks a free port (what tests want).
   */
  port?: number;
  /**
   * Variables applied on top of process.env for every service, e.g. `{ SIM_TOKENS_PER_SECOND: '5000' }`.
   * `undefined` removes an inherited variable. Ports and addresses are the launcher's and cannot be overridden.
   */
  env?: Record<string, string | undefined>;
  /**
   * Redis for the edge and billing. Default: `REDIS_URL`; else the stack's own `redis-server` on a
   * free port, stopped by `stop()` (a Redis that happens to answer on 6379 is never used unless
   * REDIS_URL names it).
   */
  redisUrl?: string;
  /** @deprecated The stack always starts its own Redis unless given a URL; kept so older callers compile. */
  privateRedis?: boolean;
  /**
   * Where the stack's own Redis keeps its data, with append-only persistence, so stored responses
   * and ledgers survive a restart (`npm start`: `.fastloop/redis`). Default: a throw-away folder.
   */
  redisDataDir?: string;
  /** `LOG_LEVEL` of every service. Default: `LOG_LEVEL` from env, else `info`. */
  logLevel?: string;
  /**
   * Folder for `<service>.log` (stdout and stderr, truncated at each start). Default: a fresh folder
   * under the OS temp dir, so concurrent stacks never share files; it outlives the stack, for reading
   * after a failure, until a later stack prunes it a day after its last write. `npm start` uses `.fastloop/logs`.
   */
  logDir?: string;
  /** Called with every line a service writes, e.g. to echo it to a terminal. Default: none (files only). */
  onLogLine?: (service: InstanceName, line: string) => void;
  /**
   * Called while a service starts when its /readyz names what it waits for (a Redis or an upstream
   * that does not answer), and again when that changes. The service keeps retrying; so does the start,
   * until its deadline.
   */
  onWaiting?: (service: InstanceName, waiting: readonly WaitingFor[]) => void;
  /** The whole stack must be ready within this many ms. Default: service-kit's defaultReadyTimeoutMs (120 s, or FASTLOOP_READY_TIMEOUT_MS). */
  readyTimeoutMs?: number;
  /** In stop(), how long each service may drain after SIGTERM before SIGKILL. Default 30 000 (services drain within 25 s). */
  stopTimeoutMs?: number;
  /**
   * Restart a service that crashes while the stack is up, with backoff, until it crashes more than
   * `maxRestarts` times within `windowMs`; then `crashed` resolves. Default: no restarts (tests want
   * a crash to fail loudly); `npm start` restarts.
   */
  restart?: RestartPolicyOptions;
  /** Called before each restart, e.g. to say so in the terminal. */
  onRestart?: (restart: ServiceRestart) => void;
  /**
   * Called when a service lost the race for an internal port the launcher picked (another process
   * bound it first), just before the stack starts again on new ports. Default: none.
   */
  onPortRace?: (err: StackStartError) => void;
  /** Aborts a start in progress: what was started is stopped and startStack rejects with code `aborted`. */
  signal?: AbortSignal;
  /**
   * Inference workers to run behind the router (each its own process, ids sim-0 … sim-N-1, all in
   * the router's INFERENCE_WORKERS). Default: `FASTLOOP_WORKERS` from env, else 1.
   */
  workers?: number;
  /** Repository root: the services' cwd, where tsx finds tsconfig.json. Default: two folders above this file. */
  rootDir?: string;
  /** Other entry files (relative to rootDir or absolute); for testing the launcher itself with fake services. */
  entries?: Partial<Record<ServiceName, string>>;
}

/** Options after defaults and validation; built once per start. */
export interface ResolvedStackOptions {
  readonly base: Readonly<Record<string, string | undefined>>;
  /** The requested public port; 0 still means "pick one". */
  readonly port: number;
  readonly logLevel: string;
  readonly bindHost: string;
  readonly readyTimeoutMs: number;
  readonly stopTimeoutMs: number;
  /** Inference workers (≥ 1). */
  readonly workers: number;
  readonly rootDir: string;
  readonly entries: Readonly<Record<ServiceName, string>>;
}

/**
 * A folder of service bundles (`node deploy/build-bundles.mjs` → `dist/`) to run instead of the
 * TypeScript entries under tsx: what the image runs. tsx reads every import through a getter, which
 * the bundles do not (both name each closure they make: docs/decisions.md, session 18); every
 * benchmark that starts a stack runs them when this is set.
 */
export const SERVICE_BUNDLES_ENV = 'FASTLOOP_SERVICE_BUNDLES';

/** The default public port when neither the option nor PORT says otherwise. */
export const DEFAULT_PUBLIC_PORT = 8080;

/**
 * Merges `options` with the environment and defaults, and validates once with errors that name the
 * option (or variable) at fault.
 */
export function resolveStackOptions(
  options: StackOptions,
  processEnv: NodeJS.ProcessEnv = process.env,
): ResolvedStackOptions {
  const base: Record<string, string | undefined> = { ...processEnv, ...options.env };
  const port = options.port ?? parsePortVar(base.PORT) ?? DEFAULT_PUBLIC_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new RangeError(`startStack: options.port must be an integer from 0 to 65535, got ${String(port)}`);
  }
  const readyTimeoutMs = positive('readyTimeoutMs', options.readyTimeoutMs, defaultReadyTimeoutMs(base));
  const stopTimeoutMs = positive('stopTimeoutMs', options.stopTimeoutMs, 30_000);
  const workers = options.workers ?? parseWorkersVar(base.FASTLOOP_WORKERS) ?? 1;
  if (!Number.isInteger(workers) || workers < 1 || workers > MAX_WORKERS)
    throw new RangeError(
      `startStack: options.workers must be an integer from 1 to ${MAX_WORKERS}, got ${String(workers)}`,
    );
  const rootDir = resolve(options.rootDir ?? join(__dirname, '..', '..'));
  const bundles = base[SERVICE_BUNDLES_ENV]?.trim();
  const entries = {} as Record<ServiceName, string>;
  for (const name of SERVICE_NAMES) {
    const file =
      options.entries?.[name] ?? (bundles ? join(resolve(rootDir, bundles), `${name}.js`) : SERVICE_ENTRIES[name]);
    entries[name] = isAbsolute(file) ? file : join(rootDir, file);
  }
  return {
    base,
    port,
    logLevel: options.logLevel ?? (base.LOG_LEVEL?.trim() || 'info'),
    bindHost: base.BIND_HOST?.trim() || '127.0.0.1',
    readyTimeoutMs,
    stopTimeoutMs,
    workers,
    rootDir,
    entries,
  };
}

/** More workers than this on one machine is a typo, not a plan. */
const MAX_WORKERS = 64;

function parseWorkersVar(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_WORKERS)
    throw new RangeError(`startStack: FASTLOOP_WORKERS must be an integer from 1 to ${MAX_WORKERS}, got '${value}'`);
  return n;
}

function parsePortVar(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new RangeError(`startStack: PORT must be an integer from 0 to 65535, got '${value}'`);
  }
  return port;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`startStack: options.${name} must be a positive number of ms, got ${value}`);
  return value;
}
