import { status as GrpcStatus } from '@grpc/grpc-js';
import { ErrorCode } from './error-codes';
import { DomainError } from './grpc-errors';

/**
 * Safety's bounds on what one Classify call scans, in UTF-8 bytes of item text. Safety refuses a
 * call over them; the edge checks the same bounds before it encodes the call, so a multi-megabyte
 * item is refused without being written to protobuf and sent (issue 17).
 */
export interface ScanBounds {
  /** Largest item text (`SAFETY_MAX_ITEM_BYTES` on safety). */
  maxItemBytes: number;
  /** Largest total of item text in one call (`SAFETY_MAX_REQUEST_BYTES`); default: no bound. */
  maxRequestBytes?: number;
  /** The settings the refusal names; default safety's own. */
  names?: { item: string; request: string };
}

const SAFETY_NAMES = { item: 'SAFETY_MAX_ITEM_BYTES', request: 'SAFETY_MAX_REQUEST_BYTES' };

/**
 * Throws `safety_item_too_large` for an item over `maxItemBytes` or `safety_request_too_large`
 * for a call over `maxRequestBytes` (both INVALID_ARGUMENT, not retryable): the one definition of
 * "too large to scan", used by safety and by its callers. `firstIndex` is the first item's index in
 * the conversation (what the error names).
 */
export function checkScanBounds(items: readonly { text: string }[], firstIndex: number, bounds: ScanBounds): void {
  const { maxItemBytes, maxRequestBytes = Number.POSITIVE_INFINITY, names = SAFETY_NAMES } = bounds;
  // A UTF-16 code unit is 1 to 3 UTF-8 bytes, so exact O(n) counts are only needed near a limit.
  let units = 0;
  for (const item of items) units += item.text.length;
  if (units > maxRequestBytes) throw safetyRequestTooLarge(items.length, maxRequestBytes, names.request);
  const exactTotal = units * 3 > maxRequestBytes;
  let total = 0;
  items.forEach((item, i) => {
    if (item.text.length * 3 <= maxItemBytes && !exactTotal) return;
    const bytes = Buffer.byteLength(item.text, 'utf8');
    if (bytes > maxItemBytes) throw safetyItemTooLarge(firstIndex + i, bytes, maxItemBytes, names.item);
    total += bytes;
  });
  if (total > maxRequestBytes) throw safetyRequestTooLarge(items.length, maxRequestBytes, names.request);
}

/** An item too large to scan within the configured bound. */
export function safetyItemTooLarge(
  itemIndex: number,
  bytes: number,
  maxBytes: number,
  setting = SAFETY_NAMES.item,
): DomainError {
  return new DomainError(
    ErrorCode.safetyItemTooLarge,
    `item ${itemIndex} has ${bytes} bytes of text, over the ${maxBytes}-byte limit (${setting})`,
    GrpcStatus.INVALID_ARGUMENT,
    false,
  );
}

/** A call whose items together are too large to scan within the configured bound. */
export function safetyRequestTooLarge(items: number, maxBytes: number, setting = SAFETY_NAMES.request): DomainError {
  return new DomainError(
    ErrorCode.safetyRequestTooLarge,
    `the ${items} items of this call have more than ${maxBytes} bytes of text together (${setting})`,
    GrpcStatus.INVALID_ARGUMENT,
    false,
  );
}
