import { deserialize, serialize } from 'node:v8';

/**
 * A JSON body parsed on one of the edge's threads (issue 17): decoding and parsing megabytes took
 * 7–45 ms of the event loop per 4 MB here (CJK decodes slowest), where reading the parsed value
 * back (V8's serialization, what structured clone uses) costs 2–9 ms. The bytes travel in a
 * transferred buffer of their own, and the value comes back serialized, also transferred, so the
 * event loop reads it when the caller chooses (a turn of LargeBodyGate), not when the reply lands.
 */
export interface JsonTask {
  json: Uint8Array;
}

/** The parsed value, or `ok: false` for bytes that are not JSON (answered `invalid_json` by the caller). */
export type ParsedJson = { ok: true; value: unknown } | { ok: false };

/**
 * A {@link ParsedJson} as a thread sends it back: the value in V8's serialization, or, for a value
 * nested deeper than {@link MAX_SERIALIZED_DEPTH}, the bytes themselves, handed back to be parsed
 * where they are read (validation then refuses the nesting as it does for any body).
 */
export type SerializedJson = { ok: true; serialized: Uint8Array } | { ok: true; bytes: Uint8Array } | { ok: false };

/**
 * Deepest value sent back serialized. V8's serializer and deserializer recurse per level: 10,000
 * nested arrays overflowed a stack here (a 500 where the event loop's own parse and validation answer
 * 400 `nesting_too_deep`); the event loop's stack is smaller than a thread's. A request's nesting
 * bound is 128 by default, so only bodies it refuses anyway come back as bytes.
 */
export const MAX_SERIALIZED_DEPTH = 512;

export function isJsonTask(task: object): task is JsonTask {
  return 'json' in task;
}

/** Parses a task's UTF-8 bytes as the event loop would (`Buffer#toString('utf8')`, then `JSON.parse`). */
export function runJsonTask(task: JsonTask): SerializedJson {
  const { buffer, byteOffset, byteLength } = task.json;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(buffer, byteOffset, byteLength).toString('utf8'));
  } catch {
    return { ok: false };
  }
  if (nestedDeeperThan(value, MAX_SERIALIZED_DEPTH)) return { ok: true, bytes: task.json };
  return { ok: true, serialized: serialize(value) };
}

/** Whether `value` has containers nested more than `max` deep (iterative: the value may be deeper than any stack). */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= max) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

/** The buffers a task's reply transfers rather than copies. */
export function jsonReplyTransfer(result: unknown): ArrayBuffer[] {
  const { serialized, bytes } = result as { serialized?: unknown; bytes?: unknown };
  const view = serialized ?? bytes;
  if (!(view instanceof Uint8Array) || !(view.buffer instanceof ArrayBuffer)) return [];
  const whole = view.byteOffset === 0 && view.byteLength === view.buffer.byteLength;
  return whole ? [view.buffer] : []; // a view into a larger buffer is copied, never detached
}

/** The value a thread parsed (synchronous, in proportion to its size); bytes handed back are parsed here. */
export function deserializeJson(result: SerializedJson): ParsedJson {
  if (!result.ok) return result;
  if ('serialized' in result) return { ok: true, value: deserialize(result.serialized) };
  const { buffer, byteOffset, byteLength } = result.bytes;
  return { ok: true, value: JSON.parse(Buffer.from(buffer, byteOffset, byteLength).toString('utf8')) };
}

/**
 * A task carrying `bytes`, and the buffer to transfer with it. Bytes that fill an ArrayBuffer of
 * their own (a body read into place, a WebSocket message) travel in it, detached from the caller,
 * who hands them over; a view into a larger buffer (a gRPC message, Node's pool) travels as a copy.
 * Copying 23 MB into fresh memory held the event loop for ~90 ms here.
 */
export function jsonTaskOf(bytes: Uint8Array): { task: JsonTask; transferList: ArrayBuffer[] } {
  const { buffer } = bytes;
  if (buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength)
    return { task: { json: new Uint8Array(buffer) }, transferList: [buffer] };
  const json = Buffer.allocUnsafeSlow(bytes.byteLength); // every byte is written next
  json.set(bytes);
  return { task: { json }, transferList: [json.buffer] };
}
