import {
  ApiError,
  ApiErrors,
  checkStreamId,
  parseClientEvent,
  type ClientEvent,
  type RequestLimits,
  type ValidatedTools,
} from '@fastloop/protocol';
import type { ParsedJson } from '../render-pool/json-task';

/** A client message as decoding takes it: a text frame's payload, or its JSON parsed off the event loop. */
export type ClientMessage = string | ParsedJson;

/**
 * Decodes one client message (a text frame's payload, or its JSON already parsed off the event
 * loop; `bytes` its size when known; `tools` the connection's last validated tools, reused when
 * equal, and updated): the event, or the error to answer with the `stream_id` it named (when
 * valid), so a lane's error reaches its lane.
 */
export function decodeClientEvent(
  message: ClientMessage,
  options: { maxPayloadBytes?: number; limits: RequestLimits; bytes?: number; tools?: { last?: ValidatedTools } },
): ClientEvent | { error: ApiError; streamId?: string; steer?: { previous_response_id: string; input: unknown } } {
  const limit = options.maxPayloadBytes;
  if (limit !== undefined && typeof message === 'string' && utf8Exceeds(message, limit, options.bytes))
    return { error: ApiErrors.payloadTooLarge(limit) };
  if (limit !== undefined && typeof message !== 'string' && (options.bytes ?? 0) > limit)
    return { error: ApiErrors.payloadTooLarge(limit) };
  const parsed = typeof message === 'string' ? parseText(message) : message;
  if (!parsed.ok) return { error: ApiErrors.invalidJson() };
  return decodeJson(parsed.value, options);
}

function parseText(text: string): ParsedJson {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function decodeJson(
  json: unknown,
  options: { limits: RequestLimits; tools?: { last?: ValidatedTools } },
): ReturnType<typeof decodeClientEvent> {
  const parsed = parseClientEvent(json, options.limits, options.tools?.last);
  if (!(parsed instanceof ApiError)) {
    const raw = (json as { tools?: unknown }).tools;
    if (options.tools && parsed.type === 'response.create' && Array.isArray(raw) && raw.length > 0)
      options.tools.last = { raw, parsed: parsed.tools };
    return parsed;
  }
  const event = json as Record<string, unknown>;
  // A steering event that fails validation is answered as steering is: response.steer.failed, its input handed back.
  if (event.type === 'response.steer') {
    const previous = typeof event.previous_response_id === 'string' ? event.previous_response_id : '';
    return { error: parsed, steer: { previous_response_id: previous, input: event.input } };
  }
  return { error: parsed, streamId: laneNameOf(json) };
}

/** The `stream_id` of an event that failed to parse, when it names a valid lane (its error echoes it). */
function laneNameOf(json: unknown): string | undefined {
  const id = typeof json === 'object' && json !== null ? (json as { stream_id?: unknown }).stream_id : undefined;
  return typeof id === 'string' && checkStreamId(id) === undefined ? id : undefined;
}

/** Whether `text` (of `bytes` UTF-8 bytes, when known) is over `limit` bytes. */
function utf8Exceeds(text: string, limit: number, bytes?: number): boolean {
  if (bytes !== undefined) return bytes > limit;
  // Characters first: no UTF-8 text is shorter in bytes, so only a borderline event is measured.
  return text.length > limit || (text.length * 3 > limit && Buffer.byteLength(text) > limit);
}
