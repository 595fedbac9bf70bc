import { z } from 'zod';
import { ApiError } from './api-error';

/**
 * The WebSocket control events beside `response.create` (OpenAI's websocket-mode guide and Codex's
 * `responses_websocket`): lanes (`stream_id`), `response.interrupt`, `response.processed` and
 * `response.steer`. Read loosely (unknown fields tolerated), each checked once where it enters.
 */

/** A lane name: 1–256 characters of letters, digits, `_`, `-` and `.`. */
export const STREAM_ID_PATTERN = /^[A-Za-z0-9_.-]{1,256}$/;

/** 400 `invalid_stream_id` naming `stream_id`, or undefined when `value` is absent or a valid lane name. */
export function checkStreamId(value: unknown): ApiError | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' && STREAM_ID_PATTERN.test(value)) return undefined;
  const shown = typeof value === 'string' ? `'${value.slice(0, 64)}${value.length > 64 ? '…' : ''}'` : typeof value;
  return new ApiError({
    status: 400,
    type: 'invalid_request_error',
    code: 'invalid_stream_id',
    param: 'stream_id',
    message: `Invalid 'stream_id': ${shown}. A stream_id is 1 to 256 characters of letters, digits, '_', '-' and '.'.`,
  });
}

/**
 * `response.interrupt`: ends the running response `response_id` now (`discard_partial_items`: the
 * item being written is left out of the response and of its chain). Codex sends it on Esc.
 */
export const ResponseInterruptEventSchema = z.object({
  type: z.literal('response.interrupt'),
  response_id: z.string().min(1),
  mode: z.literal('discard_partial_items'),
  stream_id: z.string().regex(STREAM_ID_PATTERN).optional(),
});
export type ResponseInterruptEvent = z.infer<typeof ResponseInterruptEventSchema>;

/** `response.processed`: the client's acknowledgement of a finished response; nothing to answer. */
export const ResponseProcessedEventSchema = z.object({
  type: z.literal('response.processed'),
  response_id: z.string().optional(),
});
export type ResponseProcessedEvent = z.infer<typeof ResponseProcessedEventSchema>;

/** One steering message: user input only (text, images, files), as the guide allows. */
const SteerMessageSchema = z.object({
  type: z.literal('message').optional(),
  role: z.literal('user'),
  content: z.union([
    z.string(),
    z
      .array(
        z.looseObject({
          type: z.enum(['input_text', 'input_image', 'input_file']),
        }),
      )
      .min(1),
  ]),
});

/**
 * `response.steer`: input for the running response `previous_response_id`, queued and committed by
 * an automatic successor. Accepts only `type`, `previous_response_id` and `input` (a string or a
 * non-empty array of user messages).
 */
export const ResponseSteerEventSchema = z.strictObject({
  type: z.literal('response.steer'),
  previous_response_id: z.string().min(1),
  input: z.union([z.string().min(1), z.array(SteerMessageSchema).min(1)]),
});
export type ResponseSteerEvent = z.infer<typeof ResponseSteerEventSchema>;

/** The control events {@link parseClientEvent} knows besides `response.create`. */
export const CONTROL_EVENT_SCHEMAS = {
  'response.interrupt': ResponseInterruptEventSchema,
  'response.processed': ResponseProcessedEventSchema,
  'response.steer': ResponseSteerEventSchema,
} as const;

export type ControlEvent = ResponseInterruptEvent | ResponseProcessedEvent | ResponseSteerEvent;

/** Every client event type fastloop implements, as an unknown one's error lists them. */
export const CLIENT_EVENT_TYPES = ['response.create', ...Object.keys(CONTROL_EVENT_SCHEMAS)] as const;
