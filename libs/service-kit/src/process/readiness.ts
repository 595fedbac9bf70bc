import { get } from 'node:http';

/** Options for {@link waitForReady}. */
export interface WaitForReadyOptions {
  /** The service's readiness URL, e.g. `http://127.0.0.1:<ADMIN_PORT>/readyz`. */
  readonly url: string;
  /** Absolute deadline (ms since epoch). */
  readonly deadline: number;
  /** Pause between probes; default 100 ms. */
  readonly intervalMs?: number;
  /** Stops waiting early (the process died, the user pressed Ctrl-C, a sibling failed). */
  readonly signal?: AbortSignal;
}

/** Why {@link waitForReady} gave up. */
export type NotReadyReason = 'timeout' | 'aborted';

/**
 * Polls `url` until it answers 200. Resolves `'ready'`, or the reason it stopped; never throws, so
 * the caller decides which error to raise with which log lines.
 */
export async function waitForReady(options: WaitForReadyOptions): Promise<'ready' | NotReadyReason> {
  const interval = options.intervalMs ?? 100;
  while (!options.signal?.aborted) {
    const left = options.deadline - Date.now();
    if (left <= 0) return 'timeout';
    if (await probe(options.url, Math.min(1000, left), options.signal)) return 'ready';
    await sleep(Math.min(interval, Math.max(0, options.deadline - Date.now())), options.signal);
  }
  return 'aborted';
}

/**
 * One GET without a keep-alive agent (no pooled sockets left behind to hold a test runner open);
 * true only on 200. Connection refused (not listening yet) is an ordinary false.
 */
function probe(url: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const req = get(url, { agent: false, timeout: timeoutMs, signal }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Overrides {@link defaultReadyTimeoutMs} for every launcher start and test helper. */
export const READY_TIMEOUT_ENV = 'FASTLOOP_READY_TIMEOUT_MS';

/**
 * The one readiness budget for every service start (launcher, e2e stacks, process-level specs):
 * 120 s, since on a loaded 2-core CI machine tsx compiles each service before it can listen, and
 * several start at once. A start that fails still fails with the service's last log lines.
 */
export function defaultReadyTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[READY_TIMEOUT_ENV];
  if (raw === undefined || raw.trim() === '') return 120_000;
  const ms = Number(raw);
  if (!Number.isFinite(ms) || ms <= 0)
    throw new RangeError(`${READY_TIMEOUT_ENV} must be a positive number of ms, got '${raw}'`);
  return ms;
}
