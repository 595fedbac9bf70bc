import { status as GrpcStatus } from '@grpc/grpc-js';
import { ErrorCode } from '../error-codes';
import { DomainError, knownErrorCode } from '../grpc-errors';
import type { WorkerTaskFailure } from './worker-protocol';

export type { WorkerTaskFailure } from './worker-protocol';

/**
 * A task's own error, as the worker threw it: `failure.code` is the thrower's; `code` is that code
 * when it is one of service-kit's {@link ErrorCode}s, else `internal`.
 */
export class WorkerTaskError extends DomainError {
  /** The thrower's class name and data fields, for callers that rebuild their own error type. */
  readonly failure: WorkerTaskFailure;

  constructor(failure: WorkerTaskFailure) {
    super(knownErrorCode(failure.code), failure.message, GrpcStatus.INTERNAL, false);
    this.name = 'WorkerTaskError';
    this.failure = failure;
  }
}

/** The task did not finish within its budget (waiting included). */
export function workerTaskDeadline(timeoutMs: number): DomainError {
  return new DomainError(
    ErrorCode.taskDeadlineExceeded,
    `the task did not finish within its ${timeoutMs} ms budget`,
    GrpcStatus.DEADLINE_EXCEEDED,
    false,
  );
}

/** Too many tasks are waiting (for this key, or in all). */
export function workerPoolOverloaded(reason: string): DomainError {
  return new DomainError(ErrorCode.workerPoolOverloaded, reason, GrpcStatus.RESOURCE_EXHAUSTED, true);
}

export function workerPoolClosed(): DomainError {
  return new DomainError(ErrorCode.workerPoolClosed, 'the worker pool is closed', GrpcStatus.UNAVAILABLE, true);
}

/** The thread running the task died (an exception outside the task, out of memory, process.exit). */
export function workerCrashed(reason: string): DomainError {
  return new DomainError(ErrorCode.workerCrashed, `the worker thread died (${reason})`, GrpcStatus.INTERNAL, true);
}

export function workerTaskFailed(failure: WorkerTaskFailure): WorkerTaskError {
  return new WorkerTaskError(failure);
}
