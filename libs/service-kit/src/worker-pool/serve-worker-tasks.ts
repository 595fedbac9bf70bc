import { parentPort } from 'node:worker_threads';
import type { TaskMessage, TaskReply, WorkerTaskFailure } from './worker-protocol';

/** What a task handler learns about its task besides the payload. */
export interface TaskContext {
  /**
   * The task's deadline as a `performance.now()` time of this thread (Infinity when none): pass it
   * to code that checks a deadline (the o200k encoder) so the task stops by itself and keeps its thread.
   */
  deadline: number;
}

/**
 * Serves a WorkerPool's tasks on this worker thread, one at a time: `handler` gets each payload
 * and its result (or thrown error, with its `code`) goes back to the pool. Call once at the top of
 * the worker script. `transfer` names buffers of a result to move rather than copy (a large result's
 * bytes): they are detached here once sent.
 */
export function serveWorkerTasks<Req, Res>(
  handler: (payload: Req, context: TaskContext) => Res | Promise<Res>,
  transfer?: (result: Res) => ArrayBuffer[],
): void {
  const port = parentPort;
  if (!port) throw new Error('serveWorkerTasks runs in a worker thread');
  port.on('message', (message: TaskMessage) => {
    const deadline =
      message.deadlineAt === undefined ? Number.POSITIVE_INFINITY : message.deadlineAt - performance.timeOrigin;
    let reply: Promise<TaskReply>;
    try {
      reply = Promise.resolve(handler(message.payload as Req, { deadline })).then(
        (result): TaskReply => ({ id: message.id, ok: true, result }),
        (err: unknown): TaskReply => ({ id: message.id, ok: false, error: failureOf(err) }),
      );
    } catch (err) {
      reply = Promise.resolve({ id: message.id, ok: false, error: failureOf(err) });
    }
    void reply.then((r) => port.postMessage(r, r.ok && transfer ? transfer(r.result as Res) : undefined));
  });
}

function failureOf(err: unknown): WorkerTaskFailure {
  if (!(err instanceof Error)) return { name: 'Error', code: 'internal', message: String(err) };
  const own = err as Error & { code?: unknown };
  const details: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(err)) {
    if (field === 'code' || value === undefined || typeof value === 'function') continue;
    if (typeof value === 'object' && value !== null && !isPlain(value)) continue;
    details[field] = value;
  }
  return {
    name: err.name,
    code: typeof own.code === 'string' ? own.code : 'internal',
    message: err.message,
    ...(Object.keys(details).length > 0 ? { details } : {}),
  };
}

/** Plain data that structured clone keeps as is (not a class instance with behaviour). */
function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === Array.prototype || proto === null;
}
