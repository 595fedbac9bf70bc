import { status as GrpcStatus } from '@grpc/grpc-js';
import { DomainError } from '../grpc-errors';
import type { WorkerTaskFailure } from './worker-protocol';

export type { WorkerTaskFailure } from './worker-protocol';

/** A task's own error, as the worker threw it: `code` is the thrower's (`internal` when it had none). */
export class WorkerTaskError extends DomainError {
  /** The thrower's class name and data fields, for callers that rebuild their own error type. */
  readonly failure: WorkerTaskFailure;

  constructor(failure: WorkerTaskFailure) {
    super(failure.code, failure.message, GrpcStatus.INTERNAL, false);
    this.name = 'WorkerTaskError';
    this.failure = failure;
  }
}

/** The task did not finish within its budget (waiting included). */
export function workerTaskDeadline(timeoutMs: number): DomainError {
  return new DomainError(
    'task_deadline_exceeded',
    `the task did not finish within its ${timeoutMs} ms budget`,
    GrpcStatus.DEADLINE_EXCEEDED,
    false,
  );
}

/** Too many tasks are waiting (for this key, or in all). */
export function workerPoolOverloaded(reason: string): DomainError {
  return new DomainError('worker_pool_overloaded', reason, GrpcStatus.RESOURCE_EXHAUSTED, true);
}

export function workerPoolClosed(): DomainError {
  return new DomainError('worker_pool_closed', 'the worker pool is closed', GrpcStatus.UNAVAILABLE, true);
}

/** The thread running the task died (an exception outside the task, out of memory, process.exit). */
export function workerCrashed(reason: string): DomainError {
  return new DomainError('worker_crashed', `the worker thread died (${reason})`, GrpcStatus.INTERNAL, true);
}

export function workerTaskFailed(failure: WorkerTaskFailure): WorkerTaskError {
  return new WorkerTaskError(failure);
}
