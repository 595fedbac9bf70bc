import { z } from 'zod';
import { ErrorObjectSchema } from './error-schemas';
import {
  OutputItemSchema,
  OutputTextSchema,
  ReasoningTextSchema,
  ResponseObjectSchema,
} from './response-object-schema';

// The closed set of streaming events fastloop sends, identical over SSE and WebSocket. Shapes
// follow the official SDK's `ResponseStreamEvent` members of the same `type`.

const sequenceNumber = z.int().nonnegative();

function lifecycleEvent<const T extends string>(type: T) {
  return z.strictObject({ type: z.literal(type), sequence_number: sequenceNumber, response: ResponseObjectSchema });
}

/** First event of every response. */
export const ResponseCreatedEventSchema = lifecycleEvent('response.created');
/** Sent right after `response.created`, before any output. */
export const ResponseInProgressEventSchema = lifecycleEvent('response.in_progress');
/** Terminal: success. Clients require it (with `response.id`) or retry the turn. */
export const ResponseCompletedEventSchema = lifecycleEvent('response.completed');
/** Terminal: `response.error` says why. */
export const ResponseFailedEventSchema = lifecycleEvent('response.failed');
/** Terminal: stopped early; `response.incomplete_details` says why. */
export const ResponseIncompleteEventSchema = lifecycleEvent('response.incomplete');

function itemEvent<const T extends string>(type: T) {
  return z.strictObject({
    type: z.literal(type),
    sequence_number: sequenceNumber,
    output_index: z.int(),
    item: OutputItemSchema,
  });
}

/** An output item starts (message with no content, function call with `arguments: ""`). */
export const OutputItemAddedEventSchema = itemEvent('response.output_item.added');
/** An output item is final: what clients keep. */
export const OutputItemDoneEventSchema = itemEvent('response.output_item.done');

const ContentPartSchema = z.discriminatedUnion('type', [OutputTextSchema, ReasoningTextSchema]);

function partEvent<const T extends string>(type: T) {
  return z.strictObject({
    type: z.literal(type),
    sequence_number: sequenceNumber,
    item_id: z.string(),
    output_index: z.int(),
    content_index: z.int(),
    part: ContentPartSchema,
  });
}

/** A content part (text, reasoning text) starts, empty. */
export const ContentPartAddedEventSchema = partEvent('response.content_part.added');
/** A content part is final. */
export const ContentPartDoneEventSchema = partEvent('response.content_part.done');

const textPosition = {
  sequence_number: sequenceNumber,
  item_id: z.string(),
  output_index: z.int(),
  content_index: z.int(),
};

/** A chunk of assistant text. `logprobs` is always `[]` but required by the SDK's types. */
export const OutputTextDeltaEventSchema = z.strictObject({
  type: z.literal('response.output_text.delta'),
  ...textPosition,
  delta: z.string(),
  logprobs: z.array(z.never()),
});
/** The full text of a content part. */
export const OutputTextDoneEventSchema = z.strictObject({
  type: z.literal('response.output_text.done'),
  ...textPosition,
  text: z.string(),
  logprobs: z.array(z.never()),
});

/** A chunk of a function call's JSON arguments. */
export const FunctionCallArgumentsDeltaEventSchema = z.strictObject({
  type: z.literal('response.function_call_arguments.delta'),
  sequence_number: sequenceNumber,
  item_id: z.string(),
  output_index: z.int(),
  delta: z.string(),
});
/** A function call's complete arguments. */
export const FunctionCallArgumentsDoneEventSchema = z.strictObject({
  type: z.literal('response.function_call_arguments.done'),
  sequence_number: sequenceNumber,
  item_id: z.string(),
  output_index: z.int(),
  name: z.string(),
  arguments: z.string(),
});

/** A chunk of a custom (freeform) tool call's input text. */
export const CustomToolCallInputDeltaEventSchema = z.strictObject({
  type: z.literal('response.custom_tool_call_input.delta'),
  sequence_number: sequenceNumber,
  item_id: z.string(),
  output_index: z.int(),
  delta: z.string(),
});
/** A custom tool call's complete input. */
export const CustomToolCallInputDoneEventSchema = z.strictObject({
  type: z.literal('response.custom_tool_call_input.done'),
  sequence_number: sequenceNumber,
  item_id: z.string(),
  output_index: z.int(),
  input: z.string(),
});

/** A chunk of visible reasoning. */
export const ReasoningTextDeltaEventSchema = z.strictObject({
  type: z.literal('response.reasoning_text.delta'),
  ...textPosition,
  delta: z.string(),
});
/** The full reasoning text of a content part. */
export const ReasoningTextDoneEventSchema = z.strictObject({
  type: z.literal('response.reasoning_text.done'),
  ...textPosition,
  text: z.string(),
});

/**
 * An error inside a response's event sequence. Carries the error twice on purpose: flat
 * `code`/`message`/`param` is the SDK's documented `ResponseErrorEvent`, while the nested
 * `error` object is what OpenAI actually sends and what the SDK's SSE decoder, Codex and most
 * clients read (openai/openai-dotnet#881). `status` is there because PROTOCOL.md requires it
 * on every WebSocket error frame.
 */
export const ErrorEventSchema = z.strictObject({
  type: z.literal('error'),
  sequence_number: sequenceNumber,
  status: z.int(),
  code: z.string().nullable(),
  message: z.string(),
  param: z.string().nullable(),
  error: ErrorObjectSchema,
});

/**
 * The header (WebSocket upgrade) or metadata key (gRPC) by which a client asks for the
 * `responsesapi.websocket_timing` event before each terminal event, as OpenAI's API and Codex name it.
 */
export const TIMING_HEADER = 'x-responsesapi-include-timing-metrics';

/**
 * The opt-in per-response timing sideband (OpenAI's `responsesapi.websocket_timing`, asked for with
 * the `x-responsesapi-include-timing-metrics: true` header): out of the response's event sequence
 * (no `sequence_number`), sent just before the terminal event. Durations in ms unless named `_s`;
 * the engine figures are summed over the response's Generate calls (a retry makes a second one).
 */
export const WebSocketTimingEventSchema = z.strictObject({
  type: z.literal('responsesapi.websocket_timing'),
  timing_metrics: z.strictObject({
    response_id: z.string(),
    /** Request received → terminal event. */
    total_turn_time_s: z.number(),
    /** The API's own time: the turn's, less the engine's (engine_service_total_ms). */
    responses_duration_excl_engine_and_client_tool_time_ms: z.number(),
    /** Request received → the (first) Generate call sent: validation, load, route, render, safety. */
    pre_inference_ms: z.number(),
    /** The engine's own time to the last token, as it reports it. */
    engine_service_total_ms: z.number(),
    /** The engine's own time to the first token, as it reports it. */
    engine_service_ttft_total_ms: z.number(),
    /** Generate call sent → first token at the API (the engine and the internal hop). */
    engine_iapi_ttft_total_ms: z.number(),
    /** Mean time between tokens, as the engine reports it (0 with fewer than two tokens). */
    engine_service_tbt_across_engine_calls_ms: z.number(),
    /** Mean time between tokens as the API received them. */
    engine_iapi_tbt_across_engine_calls_ms: z.number(),
    num_engine_calls: z.int(),
  }),
});
/** The timing sideband event (not a {@link ResponseStreamEvent}: no SDK types it, clients ignore it unless asked). */
export type WebSocketTimingEvent = z.infer<typeof WebSocketTimingEventSchema>;

/** Every event fastloop streams. Closed: nothing else is ever sent (never `response.done`). */
export const ResponseStreamEventSchema = z.discriminatedUnion('type', [
  ResponseCreatedEventSchema,
  ResponseInProgressEventSchema,
  ResponseCompletedEventSchema,
  ResponseFailedEventSchema,
  ResponseIncompleteEventSchema,
  OutputItemAddedEventSchema,
  OutputItemDoneEventSchema,
  ContentPartAddedEventSchema,
  ContentPartDoneEventSchema,
  OutputTextDeltaEventSchema,
  OutputTextDoneEventSchema,
  FunctionCallArgumentsDeltaEventSchema,
  FunctionCallArgumentsDoneEventSchema,
  CustomToolCallInputDeltaEventSchema,
  CustomToolCallInputDoneEventSchema,
  ReasoningTextDeltaEventSchema,
  ReasoningTextDoneEventSchema,
  ErrorEventSchema,
]);
/** A streaming event. */
export type ResponseStreamEvent = z.infer<typeof ResponseStreamEventSchema>;
/** The streaming event with the given `type`. */
export type StreamEventOf<T extends ResponseStreamEvent['type']> = Extract<ResponseStreamEvent, { type: T }>;
/** The three events that end a response. */
export type TerminalEvent = StreamEventOf<'response.completed' | 'response.failed' | 'response.incomplete'>;
/** A content part of an output message or reasoning item, as streamed. */
export type StreamContentPart = z.infer<typeof ContentPartSchema>;
