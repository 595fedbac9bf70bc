import { status as GrpcStatus } from '@grpc/grpc-js';
import { DomainError, ErrorCode } from '@fastloop/service-kit';

/**
 * Stable codes of the errors InferenceService/Generate fails with (gRPC trailer `fastloop-error`).
 * - `prefix_miss` (FAILED_PRECONDITION, retryable): the worker does not hold `prefix_len` tokens
 *   of the session; resend the full sequence once with `prefix_len` 0.
 * - `invalid_prompt` (INVALID_ARGUMENT): empty prompt or a token id outside the vocabulary.
 * - `worker_overloaded` (RESOURCE_EXHAUSTED, retryable): no generation slot freed for the caller's
 *   tenant within `INFERENCE_SLOT_WAIT_MS` (all `INFERENCE_MAX_CONCURRENCY` busy, or its share taken).
 * - `context_length_exceeded` (INVALID_ARGUMENT): the prompt does not fit the model's context.
 * - `engine_error` (INTERNAL): the engine failed while generating.
 */
export type InferenceErrorCode =
  | typeof ErrorCode.prefixMiss
  | typeof ErrorCode.invalidPrompt
  | typeof ErrorCode.workerOverloaded
  | typeof ErrorCode.contextLengthExceeded
  | typeof ErrorCode.engineError;

/** The worker lacks the session prefix the caller assumed. */
export function prefixMiss(sessionKeyHeld: number, prefixLen: number): DomainError {
  return new DomainError(
    ErrorCode.prefixMiss,
    `worker holds ${sessionKeyHeld} tokens of this session, request assumes ${prefixLen}; resend the full prompt`,
    GrpcStatus.FAILED_PRECONDITION,
    true,
  );
}

/** The prompt cannot be fed to the model. */
export function invalidPrompt(reason: string): DomainError {
  return new DomainError(ErrorCode.invalidPrompt, reason, GrpcStatus.INVALID_ARGUMENT, false);
}

/** No generation slot for this call (the worker's, or its tenant's share, are all busy). */
export function workerOverloaded(limit: number, why?: string): DomainError {
  return new DomainError(
    ErrorCode.workerOverloaded,
    `worker is at its limit of ${limit} concurrent calls${why ? ` (${why})` : ''}`,
    GrpcStatus.RESOURCE_EXHAUSTED,
    true,
  );
}

/** The engine failed; the cause is kept for the log. */
export function engineError(cause: unknown): DomainError {
  const message = cause instanceof Error ? cause.message : String(cause);
  return new DomainError(ErrorCode.engineError, `engine failed: ${message}`, GrpcStatus.INTERNAL, false, { cause });
}

/** The prompt leaves no room to sample in the engine's context window. */
export function contextLengthExceeded(promptTokens: number, contextSize: number): DomainError {
  return new DomainError(
    ErrorCode.contextLengthExceeded,
    `prompt of ${promptTokens} tokens does not fit the model's context window of ${contextSize} tokens`,
    GrpcStatus.INVALID_ARGUMENT,
    false,
  );
}
