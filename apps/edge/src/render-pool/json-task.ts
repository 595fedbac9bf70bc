/**
 * A JSON body parsed on one of the edge's threads (issue 17): decoding and parsing megabytes took
 * 7–45 ms of the event loop per 4 MB here (CJK decodes slowest), where the parsed value's structured
 * clone back costs 2–9 ms. The bytes travel in a transferred buffer of their own.
 */
export interface JsonTask {
  json: Uint8Array;
}

/** The parsed value, or `ok: false` for bytes that are not JSON (answered `invalid_json` by the caller). */
export type ParsedJson = { ok: true; value: unknown } | { ok: false };

export function isJsonTask(task: object): task is JsonTask {
  return 'json' in task;
}

/** Parses a task's UTF-8 bytes as the event loop would (`Buffer#toString('utf8')`, then `JSON.parse`). */
export function runJsonTask(task: JsonTask): ParsedJson {
  const { buffer, byteOffset, byteLength } = task.json;
  try {
    return { ok: true, value: JSON.parse(Buffer.from(buffer, byteOffset, byteLength).toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

/** A task carrying a copy of `bytes` in a buffer of its own, and that buffer to transfer. */
export function jsonTaskOf(bytes: Uint8Array): { task: JsonTask; transferList: ArrayBuffer[] } {
  // A copy: the caller's bytes may be a view into a buffer that is not ours to detach (a gRPC message, Node's pool).
  const json = new Uint8Array(bytes.byteLength);
  json.set(bytes);
  return { task: { json }, transferList: [json.buffer] };
}
