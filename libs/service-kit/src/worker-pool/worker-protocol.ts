/** Messages between a WorkerPool and its threads (structured-cloned). */

/** Pool → worker: one task. */
export interface TaskMessage {
  id: number;
  payload: unknown;
  /** Epoch ms (`performance.timeOrigin + performance.now()`, comparable across threads) the task must finish by. */
  deadlineAt?: number;
}

/** What a task's thrown error becomes on the way back: its name, code, message and own data fields. */
export interface WorkerTaskFailure {
  name: string;
  code: string;
  message: string;
  /** The error's own enumerable fields that clone (e.g. a limit's name and value). */
  details?: Record<string, unknown>;
}

/** Worker → pool: the task's result or its error. */
export type TaskReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: WorkerTaskFailure };
