import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { FairScheduler, FairSchedulerError, type FairShare } from '../fair-scheduler';
import type { Logger } from '../logger';
import {
  workerCrashed,
  workerPoolClosed,
  workerPoolOverloaded,
  workerTaskDeadline,
  workerTaskFailed,
  type WorkerTaskFailure,
} from './worker-pool-errors';
import { workerExecArgv } from './worker-exec-argv';
import type { TaskMessage, TaskReply } from './worker-protocol';

/** Options of a {@link WorkerPool}. */
export interface WorkerPoolOptions {
  /** The worker script: a file that calls `serveWorkerTasks` (a `.ts` file runs under tsx, see `execArgv`). */
  filename: string | URL;
  /** Threads (default: the cores, `os.availableParallelism()`). */
  size?: number;
  /**
   * Threads no single key (tenant) may hold, kept for the others (default 1 when there are two or
   * more threads): one tenant's expensive requests then use at most `size - reserve` threads.
   */
  reserve?: number;
  /** Per-key weight and cap (see FairScheduler). */
  shares?: (key: string) => FairShare | undefined;
  /** Tasks waiting in total / per key before `worker_pool_overloaded` (defaults 1,000 / 64). */
  maxQueued?: number;
  maxQueuedPerKey?: number;
  /**
   * How long past a task's deadline the pool waits for the worker to give up by itself (a task
   * that checks its deadline throws and keeps its thread) before terminating the thread; default 100 ms.
   */
  hardKillGraceMs?: number;
  /**
   * Passed to every worker (default: this process's module-loading flags, so a worker of a tsx
   * process runs under tsx too; see worker-exec-argv.ts).
   */
  execArgv?: string[];
  workerData?: unknown;
  logger?: Logger;
}

/** How one task runs. */
export interface RunOptions {
  /** The fair-share key (a tenant); default `''`. */
  key?: string;
  /** Budget from now for waiting plus running, in ms (default: none). */
  timeoutMs?: number;
  signal?: AbortSignal;
  transferList?: readonly import('node:worker_threads').TransferListItem[];
  /** Told how long the task held its thread (ms, from dispatch to its end, however it ended): e.g. to pace a key's CPU. */
  held?: (ms: number) => void;
}

interface Slot {
  worker: Worker;
  /** The task it runs, if any. */
  task?: RunningTask;
}

interface RunningTask {
  id: number;
  resolve(result: unknown): void;
  reject(err: unknown): void;
  timer?: NodeJS.Timeout;
}

/**
 * A pool of worker threads for CPU-bound work that must not run on a service's event loop
 * (rendering a hostile request, scanning megabytes): tasks are shared fairly between keys
 * (FairScheduler: a cap per key, weighted fair order, bounded queues), each task has a deadline
 * (the worker sees it and may stop itself; past it plus a grace, the thread is terminated and
 * replaced), and a thread that crashes fails only its task. Errors are DomainErrors with stable
 * codes: `task_deadline_exceeded`, `worker_pool_overloaded` (retryable), `worker_pool_closed`,
 * `worker_crashed` (retryable), or the task's own error code as the worker threw it.
 */
export class WorkerPool<Req = unknown, Res = unknown> {
  readonly size: number;
  private readonly slots: Slot[] = [];
  private readonly scheduler: FairScheduler;
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: WorkerPoolOptions) {
    this.size = Math.max(1, options.size ?? availableParallelism());
    this.scheduler = new FairScheduler({
      capacity: this.size,
      reserve: options.reserve ?? (this.size > 1 ? 1 : 0),
      shares: options.shares,
      maxQueued: options.maxQueued ?? 1_000,
      maxQueuedPerKey: options.maxQueuedPerKey ?? 64,
    });
    for (let i = 0; i < this.size; i++) this.slots.push({ worker: this.spawn() });
  }

  /** Tasks running now / waiting for a thread. */
  get busy(): number {
    return this.scheduler.inUse();
  }
  get queued(): number {
    return this.scheduler.waiting();
  }

  /** Runs one task on a free thread, when `key`'s turn comes. */
  async run(payload: Req, options: RunOptions = {}): Promise<Res> {
    if (this.closed) throw workerPoolClosed();
    const started = performance.now();
    const deadlineAt =
      options.timeoutMs === undefined ? undefined : performance.timeOrigin + started + options.timeoutMs;
    let lease;
    try {
      lease = await this.scheduler.acquire(options.key ?? '', {
        timeoutMs: options.timeoutMs,
        signal: options.signal,
      });
    } catch (err) {
      throw this.schedulerError(err, options.timeoutMs);
    }
    const dispatched = performance.now();
    try {
      const slot = this.slots.find((s) => s.task === undefined);
      // Unreachable: the scheduler grants at most `size` leases and a slot is freed before its lease.
      if (!slot) throw new Error('worker pool: a lease without a free thread');
      return (await this.dispatch(slot, payload, deadlineAt, options)) as Res;
    } finally {
      lease.release();
      options.held?.(performance.now() - dispatched);
    }
  }

  /** Fails queued tasks, terminates every thread (running tasks fail `worker_pool_closed`). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.scheduler.close();
    await Promise.all(
      this.slots.map(async (slot) => {
        this.finish(slot, undefined, workerPoolClosed());
        await slot.worker.terminate();
      }),
    );
  }

  private dispatch(slot: Slot, payload: Req, deadlineAt: number | undefined, options: RunOptions): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const task: RunningTask = { id: this.nextId++, resolve, reject };
      slot.task = task;
      if (deadlineAt !== undefined) {
        const left = deadlineAt - (performance.timeOrigin + performance.now());
        task.timer = setTimeout(() => this.kill(slot, task, options.timeoutMs ?? 0), Math.max(0, left) + this.grace);
      }
      if (options.signal) {
        const onAbort = (): void => this.kill(slot, task, undefined);
        options.signal.addEventListener('abort', onAbort, { once: true });
        const done = (): void => options.signal?.removeEventListener('abort', onAbort);
        task.resolve = (result) => (done(), resolve(result));
        task.reject = (err) => (done(), reject(err));
      }
      slot.worker.ref();
      const message: TaskMessage = { id: task.id, payload, deadlineAt };
      slot.worker.postMessage(message, options.transferList);
    });
  }

  private get grace(): number {
    return this.options.hardKillGraceMs ?? 100;
  }

  /** The task overran its deadline (or was cancelled): its thread cannot be interrupted, so it is replaced. */
  private kill(slot: Slot, task: RunningTask, timeoutMs: number | undefined): void {
    if (slot.task !== task) return;
    this.options.logger?.warn({ taskId: task.id, timeoutMs }, 'worker task overran its deadline; thread replaced');
    this.finish(
      slot,
      undefined,
      timeoutMs === undefined ? workerTaskFailed(abortedFailure) : workerTaskDeadline(timeoutMs),
    );
    this.replace(slot);
  }

  private replace(slot: Slot): void {
    const old = slot.worker;
    old.removeAllListeners();
    old.on('error', () => undefined);
    void old.terminate();
    if (!this.closed) slot.worker = this.spawn();
  }

  private spawn(): Worker {
    const worker = new Worker(this.options.filename, {
      execArgv: this.options.execArgv ?? workerExecArgv(process.execArgv),
      workerData: this.options.workerData,
    });
    worker.unref();
    worker.on('message', (reply: TaskReply) => {
      const slot = this.slots.find((s) => s.worker === worker);
      if (!slot || slot.task?.id !== reply.id) return; // a task already given up on
      if (reply.ok) this.finish(slot, reply.result);
      else this.finish(slot, undefined, workerTaskFailed(reply.error));
    });
    const crashed = (reason: string): void => {
      const slot = this.slots.find((s) => s.worker === worker);
      if (!slot) return;
      this.options.logger?.error({ reason, taskId: slot.task?.id }, 'worker thread died; replaced');
      this.finish(slot, undefined, workerCrashed(reason));
      this.replace(slot);
    };
    worker.on('error', (err) => crashed(err instanceof Error ? err.message : String(err)));
    worker.on('exit', (code) => {
      if (!this.closed) crashed(`exit code ${code}`);
    });
    return worker;
  }

  private finish(slot: Slot, result: unknown, err?: unknown): void {
    const task = slot.task;
    if (!task) return;
    slot.task = undefined;
    if (task.timer) clearTimeout(task.timer);
    slot.worker.unref();
    if (err !== undefined) task.reject(err);
    else task.resolve(result);
  }

  private schedulerError(err: unknown, timeoutMs: number | undefined): unknown {
    if (!(err instanceof FairSchedulerError)) return err;
    switch (err.reason) {
      case 'timeout':
        return workerTaskDeadline(timeoutMs ?? 0);
      case 'queue_full':
        return workerPoolOverloaded(err.message);
      case 'aborted':
        return workerTaskFailed(abortedFailure);
      case 'closed':
        return workerPoolClosed();
    }
  }
}

const abortedFailure: WorkerTaskFailure = { name: 'AbortError', code: 'cancelled', message: 'the task was cancelled' };
