import { formatTail } from './line-tail';
import { spawnNodeService, type OwnedProcess, type SpawnNodeServiceOptions } from './owned-process';
import type { WaitingFor } from '../dependencies';
import { defaultReadyTimeoutMs, describeWaiting, waitForReady } from './readiness';

/** Options for {@link startNodeService}. */
export interface StartNodeServiceOptions extends SpawnNodeServiceOptions {
  /** Its readiness URL, e.g. `http://127.0.0.1:<ADMIN_PORT>/readyz`. */
  readonly readyUrl: string;
  /** Default {@link defaultReadyTimeoutMs}. */
  readonly readyTimeoutMs?: number;
  /** Grace between SIGTERM and SIGKILL when a failed start is cleaned up; default 5 s. */
  readonly stopTimeoutMs?: number;
  /** Told what the service waits for, as soon as its /readyz says (see waitForReady). */
  readonly onWaiting?: (waiting: readonly WaitingFor[]) => void;
}

/** A service that did not become ready; the process is already stopped when this is thrown. */
export class ServiceStartError extends Error {
  constructor(
    readonly service: string,
    readonly reason: 'ready_timeout' | 'service_exited',
    readonly logLines: readonly string[],
    /** What its /readyz said it was waiting for last, if anything. */
    readonly waiting: readonly WaitingFor[] = [],
  ) {
    const what =
      reason === 'service_exited'
        ? 'exited before it was ready'
        : waiting.length > 0
          ? `was not ready in time: it was waiting for ${describeWaiting(waiting)}`
          : 'was not ready in time (its /readyz never answered 200)';
    super(`${service} ${what}\n${formatTail(service, logLines)}`);
    this.name = 'ServiceStartError';
  }
}

/**
 * Spawns one fastloop service and waits for its /readyz. The caller owns the result (stop it in an
 * `afterAll`/`finally`); if it never becomes ready it is stopped here before the error is thrown,
 * so a failed setup cannot leave a process behind to hold the test runner open.
 */
export async function startNodeService(options: StartNodeServiceOptions): Promise<OwnedProcess> {
  const proc = spawnNodeService(options);
  const died = new AbortController();
  void proc.exited.then(() => died.abort());
  let waiting: readonly WaitingFor[] = [];
  const outcome = await waitForReady({
    url: options.readyUrl,
    deadline: Date.now() + (options.readyTimeoutMs ?? defaultReadyTimeoutMs()),
    signal: died.signal,
    onWaiting: (w) => {
      waiting = w;
      options.onWaiting?.(w);
    },
  });
  if (outcome === 'ready') return proc;
  await proc.stop(options.stopTimeoutMs ?? 5_000);
  throw new ServiceStartError(
    options.name,
    proc.exitInfo && outcome === 'aborted' ? 'service_exited' : 'ready_timeout',
    proc.tail(),
    waiting,
  );
}
