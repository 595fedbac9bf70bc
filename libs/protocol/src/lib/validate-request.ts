import type { z } from 'zod';
import { ApiError, ApiErrors } from './api-error';
import { InputItemSchema, type InputItem } from './input-item-schema';
import { issueToApiError } from './issue-to-api-error';
import { jsonEqual } from './json-equal';
import { checkRequestLimits, DEFAULT_REQUEST_LIMITS, type RequestLimits } from './request-limits';
import { checkStrictSchemas } from './strict-request-schemas';
import {
  ResponseCreateEventSchema,
  ResponseCreateRequestSchema,
  type ResponseCreateEvent,
  type ResponseCreateRequest,
} from './response-create-request-schema';
import { checkStreamId, CONTROL_EVENT_SCHEMAS, type ControlEvent } from './ws-client-events';

/** A parsed WebSocket client event: `response.create` (with its lane, if named) or a control event. */
export type ClientEvent = (ResponseCreateEvent & { stream_id?: string }) | ControlEvent;

// `reportInput` puts the offending value on each issue so errors can say what was sent
// ("but got a string instead"); it keeps a reference, not a copy.
const PARSE_OPTIONS = { reportInput: true } as const;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function notAnObject(what: string, value: unknown): ApiError {
  const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
  return ApiErrors.invalidRequest(
    `Invalid ${what}: expected a JSON object, but got ${got} instead.`,
    null,
    'invalid_type',
  );
}

function firstIssue(error: z.ZodError): z.core.$ZodIssue {
  return error.issues[0] as z.core.$ZodIssue;
}

/**
 * Validates a parsed `POST /v1/responses` body. Throws an {@link ApiError} (400) naming the
 * first offending field in OpenAI's param syntax (`input[2].call_id`); a body beyond `limits`
 * (see {@link checkRequestLimits}) is refused before zod reads it; a strict schema fastloop cannot
 * enforce is refused after it ({@link checkStrictSchemas}). Unknown top-level
 * fields are stripped; see {@link ResponseCreateRequestSchema} for the defaults applied.
 */
export function validateRequest(body: unknown, limits: RequestLimits = DEFAULT_REQUEST_LIMITS): ResponseCreateRequest {
  if (!isObject(body)) throw notAnObject('request body', body);
  const tooLarge = checkRequestLimits(body, limits);
  if (tooLarge) throw tooLarge;
  const result = ResponseCreateRequestSchema.safeParse(body, PARSE_OPTIONS);
  if (!result.success) throw issueToApiError(firstIssue(result.error));
  const unenforceable = checkStrictSchemas(result.data);
  if (unenforceable) throw unenforceable;
  return result.data;
}

/**
 * Validates input items one by one, so a continuation can check only the items it adds
 * (O(new items), not O(history)). Errors name the item by its index in the whole input
 * list: `offset + i`, e.g. `input[42].call_id` for the third new item after 40 known ones.
 */
export function validateItems(items: readonly unknown[], offset = 0): InputItem[] {
  const parsed = new Array<InputItem>(items.length);
  for (let i = 0; i < items.length; i++) {
    const result = InputItemSchema.safeParse(items[i], PARSE_OPTIONS);
    if (!result.success) throw issueToApiError(firstIssue(result.error), ['input', offset + i]);
    parsed[i] = result.data;
  }
  return parsed;
}

/**
 * Parses one WebSocket client event (already JSON-decoded). Returns the typed `response.create`
 * event (its `stream_id` checked: `invalid_stream_id`), a control event (`response.interrupt`,
 * `response.processed`, `response.steer`), or the {@link ApiError} to send back as an error frame —
 * the connection stays open either way. Rejects unknown event types (`invalid_value` on `type`,
 * naming the event) and `background: true` (`unsupported_parameter`), which has no meaning on a socket.
 * `previousTools`: the connection's last validated tools (under the same `limits`), reused when `tools` equals them.
 */
export function parseClientEvent(
  json: unknown,
  limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
  previousTools?: ValidatedTools,
): ClientEvent | ApiError {
  if (!isObject(json)) return notAnObject('event', json);
  // The tools an agent resends every turn: equal as JSON to ones validated before, they validate
  // the same, so their result is reused (validating ten tools was ~0.17 ms a turn,
  // bench/micro/turn-cpu.bench.ts), and, at the same place under the same limits, they passed
  // the limits' walk too (jsonEqual goes no deeper than the tools validated before).
  const reuse = previousTools !== undefined && json['tools'] != null && jsonEqual(json['tools'], previousTools.raw);
  const tooLarge = checkRequestLimits(reuse ? { ...json, tools: undefined } : json, limits);
  if (tooLarge) return tooLarge;
  const type = json['type'];
  if (type === undefined || type === null) {
    return ApiErrors.invalidRequest("Missing required parameter: 'type'.", 'type', 'missing_required_parameter');
  }
  if (type !== 'response.create') return parseControlEvent(json, String(type));
  const badLane = checkStreamId(json['stream_id']);
  if (badLane) return badLane;
  const result = ResponseCreateEventSchema.safeParse(reuse ? { ...json, tools: undefined } : json, PARSE_OPTIONS);
  if (!result.success) return issueToApiError(firstIssue(result.error));
  if (result.data.background === true) {
    return ApiErrors.unsupportedParameter('background', 'Background mode is not supported in WebSocket mode.');
  }
  const streamId = json['stream_id'];
  if (!reuse) return checkStrictSchemas(result.data) ?? onLane(result.data, streamId);
  const data = { ...result.data, tools: previousTools.parsed };
  return checkStrictSchemas({ tools: [], text: data.text }) ?? onLane(data, streamId);
}

/** The event with its lane (`stream_id`), when the client named one. */
function onLane<T extends object>(event: T, streamId: unknown): T {
  return typeof streamId === 'string' ? { ...event, stream_id: streamId } : event;
}

/** A `tools` value validated before (on the same connection): as sent, and as validation made it. */
export interface ValidatedTools {
  readonly raw: unknown;
  readonly parsed: ResponseCreateEvent['tools'];
}

function parseControlEvent(json: Record<string, unknown>, type: string): ControlEvent | ApiError {
  if (!Object.hasOwn(CONTROL_EVENT_SCHEMAS, type)) return ApiErrors.unknownEventType(type);
  if (type === 'response.interrupt') {
    const badLane = checkStreamId(json['stream_id']);
    if (badLane) return badLane;
  }
  const schema = CONTROL_EVENT_SCHEMAS[type as keyof typeof CONTROL_EVENT_SCHEMAS];
  const result = schema.safeParse(json, PARSE_OPTIONS);
  if (!result.success) return issueToApiError(firstIssue(result.error));
  return result.data;
}

/** {@link parseClientEvent} for a raw text frame: malformed JSON yields `invalid_json`. */
export function parseClientFrame(text: string, limits: RequestLimits = DEFAULT_REQUEST_LIMITS): ClientEvent | ApiError {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return ApiErrors.invalidJson();
  }
  return parseClientEvent(json, limits);
}
