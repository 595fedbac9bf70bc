import { healthV1 } from '@fastloop/proto';
import { callUnary, createGrpcClient, type Logger } from '@fastloop/service-kit';
import type { WorkerSpec } from './workers';

/** Options of a {@link WorkerHealthMonitor}. */
export interface WorkerHealthOptions {
  workers: readonly WorkerSpec[];
  /** Pause between the end of one check of a worker and the start of the next (`ROUTER_HEALTH_INTERVAL_MS`). */
  intervalMs: number;
  /** Deadline of each Check call (`ROUTER_HEALTH_TIMEOUT_MS`); a check that misses it counts as not serving. */
  timeoutMs: number;
  /** grpc.health.v1 service name to check; default `''` (the whole server). */
  service?: string;
  logger: Logger;
  /** Called on every transition, and once per worker after its first check. */
  onChange?: (worker: WorkerSpec, healthy: boolean) => void;
}

type ServingStatus = healthV1.HealthCheckResponse_ServingStatus;
const SERVING: ServingStatus = healthV1.HealthCheckResponse_ServingStatus.SERVING;

interface Watched {
  readonly spec: WorkerSpec;
  readonly client: healthV1.HealthClient;
  healthy: boolean | undefined;
  timer?: NodeJS.Timeout;
}

/**
 * Polls each worker's grpc.health.v1 Check and keeps the list of workers that answered SERVING on
 * their latest check. Unknown (not yet checked), NOT_SERVING, errors and timeouts all mean "do not
 * route here". Lifecycle: new → start() → close() (idempotent).
 */
export class WorkerHealthMonitor {
  private readonly watched: Watched[];
  private healthy: readonly WorkerSpec[] = [];
  private closed = false;

  constructor(private readonly options: WorkerHealthOptions) {
    // A dead worker's channel backs off up to 120 s by default; cap it near the poll interval so a
    // restarted worker is noticed within about one interval.
    const channel = {
      'grpc.initial_reconnect_backoff_ms': Math.min(options.intervalMs, 1_000),
      'grpc.max_reconnect_backoff_ms': Math.max(options.intervalMs, 1_000),
    };
    this.watched = options.workers.map((spec) => ({
      spec,
      client: createGrpcClient(healthV1.HealthClient, spec.address, channel),
      healthy: undefined,
    }));
  }

  /** Starts polling: every worker is checked now, then every `intervalMs`. */
  start(): void {
    for (const w of this.watched) void this.loop(w);
  }

  /** Workers that answered SERVING on their latest check, ordered by id. Cached: O(1). */
  healthyWorkers(): readonly WorkerSpec[] {
    return this.healthy;
  }

  /** Checks every worker once, now, and resolves when all answered or timed out. */
  async checkAll(): Promise<void> {
    await Promise.all(this.watched.map((w) => this.check(w)));
  }

  /** Stops polling and closes the channels. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.watched) {
      clearTimeout(w.timer);
      w.client.close();
    }
  }

  private async loop(w: Watched): Promise<void> {
    await this.check(w);
    if (this.closed) return;
    w.timer = setTimeout(() => void this.loop(w), this.options.intervalMs);
    w.timer.unref();
  }

  private async check(w: Watched): Promise<void> {
    let healthy = false;
    try {
      const res = await callUnary(
        w.client.check,
        w.client,
        { service: this.options.service ?? '' },
        { deadlineMs: this.options.timeoutMs },
      );
      healthy = res.status === SERVING;
    } catch (err) {
      this.options.logger.debug({ workerId: w.spec.id, err }, 'worker health check failed');
    }
    if (this.closed || w.healthy === healthy) return;
    const first = w.healthy === undefined;
    w.healthy = healthy;
    this.healthy = this.watched
      .filter((x) => x.healthy)
      .map((x) => x.spec)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const log = { workerId: w.spec.id, address: w.spec.address, healthy };
    // Losing a worker that was serving is the only transition an operator must look at.
    if (healthy) this.options.logger.info(log, 'worker serving');
    else if (first) this.options.logger.info(log, 'worker not serving yet');
    else this.options.logger.warn(log, 'worker stopped serving');
    this.options.onChange?.(w.spec, healthy);
  }
}
