import { status as GrpcStatus } from '@grpc/grpc-js';
import { DomainError } from '@fastloop/service-kit';

/** Stable error codes of the safety service, carried in the `fastloop-error` gRPC metadata. */
export const SafetyErrorCode = {
  /**
   * The `state` was not made by this deployment's current rules and secret (bad MAC, unknown
   * version, other rule set, malformed). The caller drops it and classifies the whole
   * conversation again with an empty state: never retry the same request.
   */
  invalidState: 'invalid_safety_state',
  /** An item's text is over `SAFETY_MAX_ITEM_BYTES`; the request is refused, never half-scanned. */
  itemTooLarge: 'safety_item_too_large',
  /** The call's items together are over `SAFETY_MAX_REQUEST_BYTES`; refused before any scanning. */
  requestTooLarge: 'safety_request_too_large',
  /**
   * The caller's tenant has too many calls waiting, or this one waited past `SAFETY_QUEUE_TIMEOUT_MS`
   * behind them (RESOURCE_EXHAUSTED, retryable): its own backlog, which other tenants do not wait on.
   */
  overloaded: 'safety_overloaded',
} as const;

/** The carried state cannot be trusted; `reason` says why (never echoes the state itself). */
export function invalidSafetyState(reason: string, cause?: unknown): DomainError {
  return new DomainError(
    SafetyErrorCode.invalidState,
    `safety state rejected (${reason}); classify the whole conversation again with an empty state`,
    GrpcStatus.INVALID_ARGUMENT,
    false,
    { cause },
  );
}

/** An item too large to scan within the configured bound. */
export function safetyItemTooLarge(itemIndex: number, bytes: number, maxBytes: number): DomainError {
  return new DomainError(
    SafetyErrorCode.itemTooLarge,
    `item ${itemIndex} has ${bytes} bytes of text, over the ${maxBytes}-byte limit (SAFETY_MAX_ITEM_BYTES)`,
    GrpcStatus.INVALID_ARGUMENT,
    false,
  );
}

/** A call whose items together are too large to scan within the configured bound. */
export function safetyRequestTooLarge(items: number, maxBytes: number): DomainError {
  return new DomainError(
    SafetyErrorCode.requestTooLarge,
    `the ${items} items of this call have more than ${maxBytes} bytes of text together (SAFETY_MAX_REQUEST_BYTES)`,
    GrpcStatus.INVALID_ARGUMENT,
    false,
  );
}

/** The tenant's queue of calls is full, or this call waited too long in it. */
export function safetyOverloaded(reason: string): DomainError {
  return new DomainError(SafetyErrorCode.overloaded, reason, GrpcStatus.RESOURCE_EXHAUSTED, true);
}
