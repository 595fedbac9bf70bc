import { status as GrpcStatus } from '@grpc/grpc-js';
import { DomainError, ErrorCode } from '@fastloop/service-kit';

// The safety service's codes (service-kit's ErrorCode):
// - `invalid_safety_state`: the `state` was not made by this deployment's current rules and secret
//   (bad MAC, unknown version, other rule set, malformed). The caller drops it and classifies the
//   whole conversation again with an empty state: never retry the same request.
// - `safety_item_too_large`: an item's text is over `SAFETY_MAX_ITEM_BYTES`; the request is
//   refused, never half-scanned.

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

/** An item too large to scan within the configured bound. */
export function safetyItemTooLarge(itemIndex: number, bytes: number, maxBytes: number): DomainError {
  return new DomainError(
    ErrorCode.safetyItemTooLarge,
    `item ${itemIndex} has ${bytes} bytes of text, over the ${maxBytes}-byte limit (SAFETY_MAX_ITEM_BYTES)`,
    GrpcStatus.INVALID_ARGUMENT,
    false,
  );
}
