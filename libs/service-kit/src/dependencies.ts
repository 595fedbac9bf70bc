import type { Logger } from 'pino';
import type { RedisClient } from './redis';

/** What a service waits for, as /readyz reports it while not ready. */
export interface WaitingFor {
  /** e.g. `redis`, `engine upstream`. */
  readonly dependency: string;
  /** Where it is looked for, without credentials: `host:port` or a URL. */
  readonly address: string;
  /** The last failure, one line (e.g. `connect ECONNREFUSED 127.0.0.1:6399`), when one was seen. */
  readonly error?: string;
}

/** One dependency of a {@link Dependencies}: its owner reports every transition. */
export interface DependencyHandle {
  /** Reachable now. Logs once when it was down. */
  up(): void;
  /** Unreachable now. Logs one line when it goes down; later failures while down are debug only. */
  down(err?: unknown): void;
  readonly isUp: boolean;
}

interface Entry {
  readonly dependency: string;
  readonly address: string;
  readonly gatesReadiness: boolean;
  state: 'unknown' | 'up' | 'down';
  error?: string;
}

/**
 * The dependencies a service needs (Redis, an upstream engine), with the one-line logging a
 * cluster operator wants: a dependency that goes (or never comes) up is named with its address
 * once, at warn, and the retries that follow are quiet; its return is one info line. Those that gate
 * readiness keep /readyz at 503 — naming them in the body — until they are up, and the process keeps
 * retrying instead of exiting (Kubernetes routes no traffic to it meanwhile and restarts nothing).
 */
export class Dependencies {
  private readonly entries: Entry[] = [];

  constructor(private readonly logger: Logger) {}

  /**
   * Registers a dependency, unknown until its first `up()`/`down()`.
   * @param options.gatesReadiness default true: the service is not ready while this is not up.
   */
  track(dependency: string, address: string, options: { gatesReadiness?: boolean } = {}): DependencyHandle {
    const entry: Entry = { dependency, address, gatesReadiness: options.gatesReadiness ?? true, state: 'unknown' };
    this.entries.push(entry);
    const log = this.logger.child({ dependency, address });
    return {
      up: () => {
        if (entry.state === 'down') log.info(`${dependency} at ${address} is reachable again`);
        else if (entry.state === 'unknown') log.debug(`${dependency} at ${address} is reachable`);
        entry.state = 'up';
        entry.error = undefined;
      },
      down: (err) => {
        const error = err === undefined ? undefined : oneLine(err);
        if (entry.state !== 'down')
          log.warn({ error }, `${dependency} at ${address} is unreachable${error ? ` (${error})` : ''}; retrying`);
        else log.debug({ error }, `${dependency} still unreachable`);
        entry.state = 'down';
        entry.error = error;
      },
      get isUp() {
        return entry.state === 'up';
      },
    };
  }

  /** True when every dependency that gates readiness is up. */
  get ready(): boolean {
    return this.entries.every((e) => !e.gatesReadiness || e.state === 'up');
  }

  /** The dependencies that keep the service from being ready. */
  waiting(): WaitingFor[] {
    return this.entries
      .filter((e) => e.gatesReadiness && e.state !== 'up')
      .map((e) => ({ dependency: e.dependency, address: e.address, ...(e.error ? { error: e.error } : {}) }));
  }
}

/**
 * Reports an ioredis client's connection to `handle`: `ready` → up, an `error` (a failed connect or
 * reconnect) → down. This is the client's only error listener needed: without one, ioredis prints
 * every failed attempt itself.
 */
export function watchRedisConnection(redis: RedisClient, handle: DependencyHandle): void {
  redis.on('ready', () => handle.up());
  redis.on('error', (err: unknown) => handle.down(err));
}

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EPIPE',
]);

/**
 * True for an error that only says a connection failed (refused, reset, unresolvable, timed out,
 * closed): the dependency's own watcher has said so once; a second component repeating it per retry
 * (BullMQ's worker, a queue) only floods the log.
 */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && CONNECTION_ERROR_CODES.has(e.code)) return true;
  return (
    typeof e?.message === 'string' &&
    /^(Connection is closed|connect ETIMEDOUT|Reached the max retries)/.test(e.message)
  );
}

/** An error's message on one line, without its stack (the address is logged beside it). */
function oneLine(err: unknown): string {
  // Not `instanceof Error`: errors from another realm (a worker, a test sandbox) are errors too.
  const message =
    typeof (err as { message?: unknown })?.message === 'string' ? (err as { message: string }).message : String(err);
  return message.split('\n')[0].slice(0, 300);
}
