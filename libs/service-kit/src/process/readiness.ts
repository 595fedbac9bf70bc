import { get } from 'node:http';
import type { WaitingFor } from '../dependencies';

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
  /**
   * Called when /readyz names what the service waits for (service-kit's `Dependencies`: a 503 with
   * `waiting`) and one of them has failed, and again whenever that changes, so a launcher can say
   * so within seconds.
   */
  readonly onWaiting?: (waiting: readonly WaitingFor[]) => void;
}

/** Why {@link waitForReady} gave up. */
export type NotReadyReason = 'timeout' | 'aborted';

/**
 * Polls `url` until it answers 200. Resolves `'ready'`, or the reason it stopped; never throws, so
 * the caller decides which error to raise with which log lines.
 */
export async function waitForReady(options: WaitForReadyOptions): Promise<'ready' | NotReadyReason> {
  const interval = options.intervalMs ?? 100;
  let reported = '';
  while (!options.signal?.aborted) {
    const left = options.deadline - Date.now();
    if (left <= 0) return 'timeout';
    const answer = await probe(options.url, Math.min(1000, left), options.signal);
    if (answer === true) return 'ready';
    // A dependency still connecting for the first time is not news; one that failed is.
    if (answer !== false && answer.some((w) => w.error) && JSON.stringify(answer) !== reported) {
      reported = JSON.stringify(answer);
      options.onWaiting?.(answer);
    }
    await sleep(Math.min(interval, Math.max(0, options.deadline - Date.now())), options.signal);
  }
  return 'aborted';
}

/**
 * One GET without a keep-alive agent (no pooled sockets left behind to hold a test runner open):
 * true on 200; what the service waits for when its 503 says; else false. Connection refused (not
 * listening yet) is an ordinary false.
 */
function probe(url: string, timeoutMs: number, signal?: AbortSignal): Promise<true | false | WaitingFor[]> {
  return new Promise((resolve) => {
    const req = get(url, { agent: false, timeout: timeoutMs, signal }, (res) => {
      if (res.statusCode === 200 || !String(res.headers['content-type']).startsWith('application/json')) {
        res.resume();
        return resolve(res.statusCode === 200);
      }
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk.slice(0, 64 * 1024 - body.length)));
      res.on('end', () => resolve(waitingIn(body)));
      res.on('error', () => resolve(false));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/** The `waiting` list of a /readyz 503 body, or false when it names none. */
function waitingIn(body: string): WaitingFor[] | false {
  try {
    const waiting = (JSON.parse(body) as { waiting?: unknown }).waiting;
    if (!Array.isArray(waiting) || waiting.length === 0) return false;
    return waiting.filter((w): w is WaitingFor => typeof w?.dependency === 'string' && typeof w?.address === 'string');
  } catch {
    return false;
  }
}

/** One line per dependency: `redis at 127.0.0.1:6399 (connect ECONNREFUSED 127.0.0.1:6399)`. */
export function describeWaiting(waiting: readonly WaitingFor[]): string {
  return waiting.map((w) => `${w.dependency} at ${w.address}${w.error ? ` (${w.error})` : ''}`).join('; ');
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
