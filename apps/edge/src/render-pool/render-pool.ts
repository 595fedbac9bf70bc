import { join } from 'node:path';
import {
  RenderDeadlineError,
  reviveProfileError,
  type RenderTask,
  type RenderTaskResult,
} from '@fastloop/model-profiles';
import {
  DomainError,
  ErrorCode,
  Gauge,
  KeyedPacer,
  WorkerPool,
  WorkerTaskError,
  workerTaskDeadline,
  type Logger,
  type Pace,
  type Registry,
} from '@fastloop/service-kit';
import { jsonTaskOf, type JsonTask, type SerializedJson } from './json-task';

/** Options of {@link createRenderPool}. */
export interface RenderPoolOptions {
  /** Threads (default: the cores). */
  size?: number;
  /** Budget of one rendering, waiting for a thread included (default 2,000 ms). */
  timeoutMs?: number;
  /**
   * Each tenant's rendering time per second, and burst (ms of a thread; `EDGE_TENANT_RENDER_MS_PER_SECOND`,
   * `EDGE_TENANT_RENDER_BURST_MS`): a rendering waits while its tenant has spent more than that, so
   * one tenant's costly shapes (a random long word tokenizes at ~240 ms per MB) hold a thread, and so a
   * core, for at most that share. Default: no pacing.
   */
  pace?: Pace;
  /** Tenant weights and caps (default: each tenant may hold all threads but one). */
  shares?: (tenant: string) => { weight?: number; maxConcurrent?: number } | undefined;
  /**
   * How long past its deadline a rendering may take to stop itself (it checks the deadline between
   * chunks) before its thread is terminated and replaced (default 1,000 ms). A new thread loads the
   * code and builds the vocabulary tables again: hundreds of ms of CPU, which a loaded machine can
   * least afford; with 100 ms, a thread starved of CPU for a moment was replaced 15 times in 10 s.
   */
  hardKillGraceMs?: number;
  /** The worker script (default: render-worker beside this file, `.ts` under tsx, `.js` in a bundle). */
  filename?: string;
  execArgv?: string[];
  logger?: Logger;
  /** Where `fastloop_edge_render_pool_tasks{state}` (running, waiting) is registered; absent: nowhere. */
  registry?: Registry;
}

/** Renders conversations on worker threads, fairly between tenants. */
export interface RenderPool {
  /**
   * Renders `task` on a thread. Rejects with the errors rendering in place throws
   * (`TokenBudgetExceededError`, `RenderLimitError`), with `RenderDeadlineError` when the
   * rendering (or the wait for a thread) overran the budget, and with a retryable DomainError
   * `worker_pool_overloaded` when the tenant's queue is full.
   */
  render(task: RenderTask, options: { tenant: string; signal?: AbortSignal }): Promise<RenderTaskResult>;
  /**
   * Decodes and parses a JSON body (UTF-8 `bytes`, handed over: detached when they fill a buffer of
   * their own, else copied) on a thread, paced and bounded as a rendering is; the value comes back
   * serialized (read it with `deserializeJson`), and bytes that are not JSON resolve `{ ok: false }`.
   */
  parseJson(bytes: Uint8Array, options: { tenant: string; signal?: AbortSignal }): Promise<SerializedJson>;
  /**
   * Loads `profileIds` on every thread (a thread starts by building the built-in vocabularies;
   * a GGUF profile loads node-llama-cpp and its file): the edge awaits it before it reports ready,
   * so no request's deadline pays a thread's start. Never rejects; a failure is logged.
   */
  warm?(profileIds: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * The edge's off-event-loop renderer: a WorkerPool of render-worker threads. A turn whose
 * rendering may take more than a few milliseconds (long new text) renders here, so a hostile
 * request costs its tenant a thread, never the event loop that serves every other tenant.
 */
export function createRenderPool(options: RenderPoolOptions = {}): RenderPool {
  const timeoutMs = options.timeoutMs ?? 2_000;
  const pacer = new KeyedPacer(options.pace ?? { perSecond: 0, burst: 0 });
  const pool = new WorkerPool<RenderTask | JsonTask, RenderTaskResult | SerializedJson>({
    filename: options.filename ?? defaultWorkerFile(),
    size: options.size,
    shares: options.shares,
    hardKillGraceMs: options.hardKillGraceMs ?? 1_000,
    execArgv: options.execArgv,
    logger: options.logger,
  });
  if (options.registry) {
    new Gauge({
      name: 'fastloop_edge_render_pool_tasks',
      help: "Renderings on the edge's render threads, running or waiting for a thread",
      labelNames: ['state'],
      registers: [options.registry],
      collect() {
        this.set({ state: 'running' }, pool.busy);
        this.set({ state: 'waiting' }, pool.queued);
      },
    });
  }
  /** Runs `task` once its tenant's pace allows, within one budget for the wait and the run. */
  async function paced<R>(
    task: RenderTask | JsonTask,
    { tenant, signal }: { tenant: string; signal?: AbortSignal },
    transferList?: ArrayBuffer[],
  ): Promise<R> {
    const started = performance.now();
    try {
      // The wait for the tenant's pace counts in the task's budget, as the wait for a thread does.
      await pacer.take(tenant, 0, { timeoutMs, onTimeout: () => workerTaskDeadline(timeoutMs), signal });
      const left = timeoutMs - (performance.now() - started);
      const held = (ms: number) => pacer.spend(tenant, ms);
      return (await pool.run(task, { key: tenant, timeoutMs: left, signal, held, transferList })) as R;
    } catch (err) {
      throw translate(err, timeoutMs);
    }
  }
  return {
    render: (task, options) => paced<RenderTaskResult>(task, options),
    parseJson(bytes, options) {
      const { task, transferList } = jsonTaskOf(bytes);
      return paced<SerializedJson>(task, options, transferList);
    },
    async warm(profileIds) {
      // One task per thread and profile, under keys of their own: a key may not hold every thread.
      const ids = profileIds.length > 0 ? profileIds : ['harmony-o200k'];
      const threads = Array.from({ length: pool.size }, (_, i) =>
        (async () => {
          for (const profileId of ids)
            await pool.run({ profileId, entries: [] }, { key: `warm:${i}`, timeoutMs: 60_000 });
        })(),
      );
      await Promise.all(threads).catch((err: unknown) => options.logger?.warn({ err }, 'render pool warm-up failed'));
    },
    close: () => pool.close(),
  };
}

/** Pool errors as the errors rendering in place throws. */
function translate(err: unknown, timeoutMs: number): unknown {
  if (err instanceof WorkerTaskError) return reviveProfileError(err.failure) ?? err;
  if (DomainError.is(err, ErrorCode.taskDeadlineExceeded))
    return Object.assign(new RenderDeadlineError(timeoutMs), { cause: err });
  return err;
}

/** render-worker.ts under tsx (development, tests), `edge-render-worker.js` beside the edge bundle. */
function defaultWorkerFile(): string {
  return __filename.endsWith('.ts') ? join(__dirname, 'render-worker.ts') : join(__dirname, 'edge-render-worker.js');
}
