import { status as GrpcStatus, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { healthV1, inferenceV1 } from '@fastloop/proto';
import { createGrpcClient, type Logger } from '@fastloop/service-kit';
import type { WorkerSpec } from '../workers';
import { KvView } from './kv-view';

/** Options of a {@link WorkerLink}. */
export interface WorkerLinkOptions {
  /** grpc.health.v1 service name watched (`ROUTER_HEALTH_SERVICE`, '' = the whole server). */
  healthService: string;
  /** Least spacing of the worker's stats messages, ms (`ROUTER_STATS_INTERVAL_MS`). */
  statsIntervalMs: number;
  /** FASTLOOP_INTERNAL_TOKEN: WatchWorkerStats requires it (health does not). */
  internalToken?: string;
  logger: Logger;
  /** Called when the worker's serving state changes. */
  onServingChange?: (link: WorkerLink, serving: boolean) => void;
  /** Called after every stats message (load and KV view updated). */
  onStats?: (link: WorkerLink) => void;
}

const SERVING = healthV1.HealthCheckResponse_ServingStatus.SERVING;
const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 1_000;
/** A worker without WatchWorkerStats (older build) is asked again this rarely. */
const UNIMPLEMENTED_RETRY_MS = 30_000;

/**
 * The router's live view of one inference worker, from two streams it keeps open: grpc.health.v1
 * Watch (SERVING or not, pushed the moment it changes, e.g. NOT_SERVING when the worker drains)
 * and WatchWorkerStats (load, and the sessions and roots it holds). A stream that ends or fails
 * makes the worker not serving (health) or unknown (stats) until it is re-established, with backoff.
 * Lifecycle: new → start() → close() (idempotent).
 */
export class WorkerLink {
  readonly kv = new KvView();
  /** The latest health message said SERVING and its stream is up. */
  serving = false;
  /** Whether health has answered at least once (for logs). */
  private healthKnown = false;
  /** The worker's latest load report; undefined while its stats stream is down. */
  load: inferenceV1.WorkerLoad | undefined;
  /** When `load` arrived (Date.now()). */
  loadAt = 0;
  /** The reporting process (a new one holds nothing the old one reported). */
  instanceId = '';
  private readonly health: healthV1.HealthClient;
  private readonly inference: inferenceV1.InferenceServiceClient;
  private healthCall: ClientReadableStream<healthV1.HealthCheckResponse> | undefined;
  private statsCall: ClientReadableStream<inferenceV1.WorkerStats> | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(
    readonly spec: WorkerSpec,
    private readonly options: WorkerLinkOptions,
  ) {
    const channel = {
      // A dead worker's channel backs off up to 120 s by default: cap it so a restarted worker is
      // seen within a second; keepalive notices a peer that vanished without closing its socket.
      'grpc.initial_reconnect_backoff_ms': MIN_BACKOFF_MS,
      'grpc.max_reconnect_backoff_ms': MAX_BACKOFF_MS,
      'grpc.keepalive_time_ms': 5_000,
      'grpc.keepalive_timeout_ms': 2_000,
    };
    this.health = createGrpcClient(healthV1.HealthClient, spec.address, channel);
    this.inference = createGrpcClient(inferenceV1.InferenceServiceClient, spec.address, channel, options.internalToken);
  }

  /** Opens both streams. */
  start(): void {
    this.watchHealth(MIN_BACKOFF_MS);
    this.watchStats(MIN_BACKOFF_MS);
  }

  /** Cancels the streams and closes the channels. Safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.healthCall?.cancel();
    this.statsCall?.cancel();
    this.health.close();
    this.inference.close();
  }

  private watchHealth(backoffMs: number): void {
    if (this.closed) return;
    const call = this.health.watch({ service: this.options.healthService });
    this.healthCall = call;
    let nextBackoff = backoffMs;
    call.on('data', (res: healthV1.HealthCheckResponse) => {
      nextBackoff = MIN_BACKOFF_MS;
      this.setServing(res.status === SERVING);
    });
    const ended = (err?: ServiceError) => {
      if (this.healthCall !== call) return;
      this.healthCall = undefined;
      if (err && err.code !== GrpcStatus.CANCELLED)
        this.options.logger.debug({ workerId: this.spec.id, err: err.message }, 'worker health stream failed');
      this.setServing(false);
      this.later(nextBackoff, () => this.watchHealth(Math.min(MAX_BACKOFF_MS, nextBackoff * 2)));
    };
    call.on('error', ended);
    call.on('end', () => ended());
  }

  private watchStats(backoffMs: number): void {
    if (this.closed) return;
    const call = this.inference.watchWorkerStats({ minIntervalMs: this.options.statsIntervalMs });
    this.statsCall = call;
    let nextBackoff = backoffMs;
    call.on('data', (stats: inferenceV1.WorkerStats) => {
      nextBackoff = MIN_BACKOFF_MS;
      if (stats.instanceId !== this.instanceId) {
        this.instanceId = stats.instanceId;
        this.kv.clear();
      }
      this.kv.apply(stats);
      this.load = stats.load;
      this.loadAt = Date.now();
      this.options.onStats?.(this);
    });
    const ended = (err?: ServiceError) => {
      if (this.statsCall !== call) return;
      this.statsCall = undefined;
      // What it held is unknown until the next snapshot.
      this.load = undefined;
      this.kv.clear();
      const retryMs = err?.code === GrpcStatus.UNIMPLEMENTED ? UNIMPLEMENTED_RETRY_MS : nextBackoff;
      if (err && err.code !== GrpcStatus.CANCELLED)
        this.options.logger.debug({ workerId: this.spec.id, err: err.message }, 'worker stats stream failed');
      this.later(retryMs, () => this.watchStats(Math.min(MAX_BACKOFF_MS, nextBackoff * 2)));
    };
    call.on('error', ended);
    call.on('end', () => ended());
  }

  private setServing(serving: boolean): void {
    const first = !this.healthKnown;
    this.healthKnown = true;
    if (this.serving === serving && !first) return;
    this.serving = serving;
    const log = { workerId: this.spec.id, address: this.spec.address, serving };
    if (serving) this.options.logger.info(log, 'worker serving');
    else if (first) this.options.logger.info(log, 'worker not serving yet');
    else this.options.logger.warn(log, 'worker stopped serving');
    this.options.onServingChange?.(this, serving);
  }

  private later(ms: number, fn: () => void): void {
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }
}
