/**
 * Every stable code a {@link DomainError} can carry across a gRPC hop (`fastloop-error` metadata),
 * in one place, so producers and consumers share one vocabulary and a typo does not compile.
 * Consumers compare with these constants (`err.code === ErrorCode.prefixMiss`) or look codes up
 * in a table keyed by {@link InternalErrorCode}, never with string literals.
 */
export const ErrorCode = {
  // Any call (transport failures and the multiplexed streams).
  /** The peer cannot be reached or is draining (retryable). */
  unavailable: 'unavailable',
  /** The call's deadline passed (retryable). */
  deadlineExceeded: 'deadline_exceeded',
  /** The caller cancelled the call. */
  cancelled: 'cancelled',
  /** Anything without a code of its own; also what an unknown code from a newer peer reads as. */
  internal: 'internal',
  /** The client was closed before the call. */
  closed: 'closed',
  /** A multiplexed stream's frame that neither starts a new call nor cancels a running one. */
  invalidFrame: 'invalid_frame',
  /** A multiplexed stream is at its bound of running calls (retryable). */
  tooManyCalls: 'too_many_calls',
  /** An internal call without the shared service token (`FASTLOOP_INTERNAL_TOKEN`). */
  unauthenticated: 'unauthenticated',
  /** A multiplexed call's response is over the stream's message limit. */
  responseTooLarge: 'response_too_large',

  // Worker pools (service-kit `WorkerPool`: CPU-bound tasks on threads of their own).
  /** The task did not finish within its budget, waiting included. */
  taskDeadlineExceeded: 'task_deadline_exceeded',
  /** Too many tasks are waiting, for the caller's key or in all (retryable). */
  workerPoolOverloaded: 'worker_pool_overloaded',
  /** The pool was closed (retryable elsewhere). */
  workerPoolClosed: 'worker_pool_closed',
  /** The thread running the task died; only that task fails (retryable). */
  workerCrashed: 'worker_crashed',

  // Inference (InferenceService/Generate, and the edge's reading of its stream).
  /** The worker does not hold the `prefix_len` tokens the caller assumed: resend the whole prompt once. */
  prefixMiss: 'prefix_miss',
  /** Empty prompt, a token outside the vocabulary, or malformed constraints. */
  invalidPrompt: 'invalid_prompt',
  /** No generation slot: the worker's, or its tenant's share of them, are all busy (retryable elsewhere). */
  workerOverloaded: 'worker_overloaded',
  /** The prompt leaves no room to sample in the engine's context window. */
  contextLengthExceeded: 'context_length_exceeded',
  /** The engine failed while generating. */
  engineError: 'engine_error',
  /** The worker sent nothing for `INFERENCE_IDLE_TIMEOUT_MS` (retryable). */
  inferenceIdleTimeout: 'inference_idle_timeout',
  /** The Generate stream ended without its final message (retryable). */
  inferenceIncomplete: 'inference_incomplete',

  // Router.
  /** No model or alias of that name. */
  modelNotFound: 'model_not_found',
  /** The model exists but no worker is serving it right now (retryable). */
  noWorkerAvailable: 'no_worker_available',

  // Safety.
  /** The carried state was not made by this deployment's rules and secret: classify from the start. */
  invalidSafetyState: 'invalid_safety_state',
  /** An item's text is over `SAFETY_MAX_ITEM_BYTES`. */
  safetyItemTooLarge: 'safety_item_too_large',
  /** The call's items together are over `SAFETY_MAX_REQUEST_BYTES`; refused before any scanning. */
  safetyRequestTooLarge: 'safety_request_too_large',
  /**
   * The caller's tenant has too many calls waiting, or this one waited past `SAFETY_QUEUE_TIMEOUT_MS`
   * behind them (retryable): its own backlog, which other tenants do not wait on.
   */
  safetyOverloaded: 'safety_overloaded',
} as const;

/** One of the {@link ErrorCode} values. */
export type InternalErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));

/** Whether a code read from the wire is one this build knows. */
export function isInternalErrorCode(code: string): code is InternalErrorCode {
  return CODES.has(code);
}
