import { randomBytes } from 'node:crypto';
import type { ServerWritableStream } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { inferenceV1 } from '@fastloop/proto';
import type { KvEventLog } from './kv-event-log';
import type { LoadMeter } from './load-meter';

/** Where the stats come from. */
export interface WorkerStatsSources {
  workerId: string;
  kv: KvEventLog;
  meter: LoadMeter;
  /** Generate calls in progress (GenerateService.inFlightCount). */
  inFlight: () => number;
  /** Sequences and tokens held, and the content index's blocks (the session cache). */
  held: () => { sessions: number; tokens: number; blocks: number };
  /** INFERENCE_SESSION_CACHE_TOKENS. */
  kvCapacityTokens: number;
  /** INFERENCE_MAX_CONCURRENCY. */
  maxConcurrency: number;
  logger: Logger;
}

type StatsCall = ServerWritableStream<inferenceV1.WatchWorkerStatsRequest, inferenceV1.WorkerStats>;

/** Spacing of messages when the caller does not ask for one, ms. */
export const DEFAULT_STATS_INTERVAL_MS = 25;
/** Even with nothing changed, a message goes out this often, so the rates stay current. */
const REFRESH_MS = 1_000;

/**
 * InferenceService/WatchWorkerStats: each stream gets a snapshot of what the worker holds and its
 * load, then the changes. KV changes leave at once (coalesced within one turn of the event loop):
 * a session is kept just before its GenerateDone goes to the edge, and the agent's next turn may
 * ask the router where that session is a millisecond later, so it must not wait for a tick. Load
 * is sampled every interval (cheap reads of counters) and sent when it changed. A stream whose
 * caller does not drain skips sends rather than queueing messages. Draining ends every stream, so
 * a router sees the end of the stream beside the health NOT_SERVING.
 */
export class WorkerStatsService {
  /** Random per process: a router that sees it change drops what the old instance reported. */
  readonly instanceId = randomBytes(8).toString('hex');
  private readonly streams = new Set<() => void>();
  private draining = false;

  constructor(private readonly sources: WorkerStatsSources) {}

  /** The grpc-js handler. */
  readonly handler = (call: StatsCall): void => {
    if (this.draining) {
      call.end();
      return;
    }
    const interval = Math.max(5, call.request.minIntervalMs || DEFAULT_STATS_INTERVAL_MS);
    const reader = this.sources.kv.subscribe();
    let lastLoad = '';
    let lastSentAt = 0;
    let blocked = false;
    let closed = false;
    const tick = () => {
      if (blocked || closed) return;
      const load = this.load();
      const loadKey = `${load.inFlight}|${load.queuedPrefillTokens}|${load.sessions}|${load.kvTokens}`;
      const now = Date.now();
      if (!this.sources.kv.hasChanges(reader) && loadKey === lastLoad && now - lastSentAt < REFRESH_MS) return;
      const changes = this.sources.kv.read(reader);
      lastLoad = loadKey;
      lastSentAt = now;
      const ok = call.write({
        workerId: this.sources.workerId,
        instanceId: this.instanceId,
        load,
        snapshot: changes.snapshot,
        kept: changes.kept,
        removed: changes.removed,
      });
      if (!ok) {
        blocked = true;
        call.once('drain', () => {
          blocked = false;
          tick();
        });
      }
    };
    const timer = setInterval(tick, interval);
    timer.unref();
    let flushQueued = false;
    const stopListening = this.sources.kv.onChange(() => {
      if (flushQueued) return;
      flushQueued = true;
      setImmediate(() => {
        flushQueued = false;
        tick();
      });
    });
    this.sources.logger.debug({ intervalMs: interval }, 'stats stream opened');
    const stop = () => {
      closed = true;
      clearInterval(timer);
      stopListening();
      this.sources.kv.unsubscribe(reader);
      this.streams.delete(end);
    };
    const end = () => {
      stop();
      call.end();
    };
    this.streams.add(end);
    call.on('cancelled', stop);
    call.on('close', stop);
    call.on('error', stop);
    tick();
  };

  /** Ends every stream and refuses new ones (the worker is draining). Idempotent. */
  drain(): void {
    this.draining = true;
    for (const end of [...this.streams]) end();
  }

  /** The worker's load now. */
  load(): inferenceV1.WorkerLoad {
    const { meter, held } = this.sources;
    const h = held();
    return {
      inFlight: this.sources.inFlight(),
      queuedPrefillTokens: meter.queuedPrefillTokens,
      sessions: h.sessions,
      kvTokens: h.tokens,
      kvCapacityTokens: this.sources.kvCapacityTokens,
      kvBlocks: h.blocks,
      prefillTokensPerSecond: meter.prefillTokensPerSecond(),
      decodeTokensPerSecond: meter.decodeTokensPerSecond(),
      maxConcurrency: this.sources.maxConcurrency,
    };
  }
}
