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

/** A {@link ParsedJson} as a thread sends it back: the value in V8's serialization. */
export type SerializedJson = { ok: true; serialized: Uint8Array } | { ok: false };

/**
 * Deepest nesting a thread sends back. V8's serializer and deserializer recurse per level: 10,000
 * nested arrays overflowed a stack here (a 500 where the event loop's own parse and validation answer
 * 400 `nesting_too_deep`); the event loop's stack is smaller than a thread's. Deeper values come back
 * cut to this depth ({@link cutDeeperThan}), which validation refuses as it refuses the whole value:
 * a request's nesting bound (EDGE_MAX_JSON_DEPTH, 128 by default) is below it.
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
  cutDeeperThan(value, MAX_SERIALIZED_DEPTH);
  return { ok: true, serialized: serialize(value) };
}

/**
 * Empties, in place, each container `levels - 1` below the root that holds a container, so `value`
 * nests at most `levels` deep (iterative: it may be deeper than any stack). Only what lies below
 * level `levels` changes: a validation whose nesting bound is under `levels` finds the same first
 * violation in the cut value as in the whole one, having met it on the way down (json-task.spec).
 * Sending the whole value back as bytes instead made the event loop parse megabytes again.
 */
export function cutDeeperThan(value: unknown, levels: number): void {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    const children = Object.values(node);
    if (depth < levels - 1) {
      for (const child of children) stack.push([child, depth + 1]);
    } else if (children.some((child) => typeof child === 'object' && child !== null)) {
      if (Array.isArray(node)) node.length = 0;
      else for (const key of Object.keys(node)) delete (node as Record<string, unknown>)[key];
    }
  }
}

/** The buffers a task's reply transfers rather than copies. */
export function jsonReplyTransfer(result: unknown): ArrayBuffer[] {
  const view = (result as { serialized?: unknown }).serialized;
  if (!(view instanceof Uint8Array) || !(view.buffer instanceof ArrayBuffer)) return [];
  const whole = view.byteOffset === 0 && view.byteLength === view.buffer.byteLength;
  return whole ? [view.buffer] : []; // a view into a larger buffer is copied, never detached
}

/** The value a thread parsed (synchronous, in proportion to its size). */
export function deserializeJson(result: SerializedJson): ParsedJson {
  return result.ok ? { ok: true, value: deserialize(result.serialized) } : result;
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
