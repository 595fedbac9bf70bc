import { status as GrpcStatus } from '@grpc/grpc-js';
import { DomainError, ErrorCode } from '@fastloop/service-kit';

// The safety service's codes (service-kit's ErrorCode):
// - `invalid_safety_state`: the `state` was not made by this deployment's current rules and secret
//   (bad MAC, unknown version, other rule set, malformed). The caller drops it and classifies the
//   whole conversation again with an empty state: never retry the same request.
// - `safety_item_too_large`: an item's text is over `SAFETY_MAX_ITEM_BYTES`; the request is
//   refused, never half-scanned.
// - `safety_request_too_large`: the call's items together are over `SAFETY_MAX_REQUEST_BYTES`;
//   refused before any scanning. Both are built by service-kit's scan-bounds.ts, whose check the
//   edge runs too before it encodes a call.
// - `safety_overloaded` (RESOURCE_EXHAUSTED, retryable): the caller's tenant has too many calls
//   waiting, or this one waited past `SAFETY_QUEUE_TIMEOUT_MS` behind them: its own backlog, which
//   other tenants do not wait on.

/** The carried state cannot be trusted; `reason` says why (never echoes the state itself). */
export function invalidSafetyState(reason: string, cause?: unknown): DomainError {
  return new DomainError(
    ErrorCode.invalidSafetyState,
    `safety state rejected (${reason}); classify the whole conversation again with an empty state`,
    GrpcStatus.INVALID_ARGUMENT,
    false,
    { cause },
  );
}

/** The tenant's queue of calls is full, or this call waited too long in it. */
export function safetyOverloaded(reason: string): DomainError {
  return new DomainError(ErrorCode.safetyOverloaded, reason, GrpcStatus.RESOURCE_EXHAUSTED, true);
}
