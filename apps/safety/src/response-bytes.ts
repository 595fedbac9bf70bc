import type { safetyV1 } from '@fastloop/proto';

/** A field's tag and length or varint value, at most (a uint32 varint is ≤ 5 bytes, a tag 1 here). */
const FIELD = 6;

/**
 * An upper bound of a ClassifyResponse's encoded size from its lengths alone, so that the stream
 * measures only a response that may be near its limit (mux-server `messageBytesAtMost`): a
 * string's UTF-8 is at most 3 bytes per UTF-16 unit, and every other field is a varint or an enum.
 */
export function classifyResponseBytesAtMost(response: safetyV1.ClassifyResponse): number {
  let bytes = 6 * FIELD + response.state.length;
  // Ten fields and the finding's own tag and length.
  for (const f of response.findings) bytes += 11 * FIELD + 3 * (f.ruleId.length + f.message.length);
  return bytes;
}
