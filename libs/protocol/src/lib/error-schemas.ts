import { z } from 'zod';

/**
 * The `type` field of an error object. These mirror what OpenAI itself sends, so SDKs and
 * CLIs that branch on it keep working: note that OpenAI reports a bad API key as
 * `invalid_request_error` (with HTTP 401), not as a separate authentication type.
 */
export const ApiErrorTypeSchema = z.enum([
  'invalid_request_error',
  'requests',
  'insufficient_quota',
  'server_error',
  'service_unavailable_error',
]);
/** One of {@link ApiErrorTypeSchema}'s values. */
export type ApiErrorType = z.infer<typeof ApiErrorTypeSchema>;

/**
 * The registry of error codes this library emits. Codes are stable API: clients match on them
 * (`previous_response_not_found` and `websocket_connection_limit_reached` trigger a reconnect
 * or a full resend; `rate_limit_exceeded` a delayed retry), so add, never rename. An
 * {@link ApiError} may carry a code outside this list (a transport-specific one such as
 * `upgrade_required`), but prefer adding it here.
 */
export const ApiErrorCodeSchema = z.enum([
  // Request validation, worded like OpenAI's own validation errors.
  'invalid_json',
  'missing_required_parameter',
  'invalid_type',
  'invalid_value',
  'unsupported_parameter',
  'integer_below_min_value',
  'integer_above_max_value',
  'decimal_below_min_value',
  'decimal_above_max_value',
  'string_below_min_length',
  'string_above_max_length',
  'array_below_min_length',
  'array_above_max_length',
  'object_above_max_properties',
  // Bounds on a request's shape (request-limits.ts) and on what it renders to.
  'nesting_too_deep',
  'schema_too_deep',
  'schema_too_large',
  'tool_too_large',
  // A strict schema with keywords fastloop cannot enforce while sampling (strict-schema.ts).
  'invalid_function_parameters',
  'invalid_json_schema',
  'header_too_large',
  // Bounds on one request's cost (issue 17): the bytes safety scans, the time its rendering takes.
  'safety_item_too_large',
  'safety_request_too_large',
  'render_deadline_exceeded',
  // Request semantics.
  'invalid_api_key',
  'model_not_found',
  'previous_response_not_found',
  'not_found',
  'invalid_prompt',
  'invalid_encrypted_content',
  'context_length_exceeded',
  'payload_too_large',
  'websocket_connection_limit_reached',
  // Capacity and failures.
  'rate_limit_exceeded',
  'insufficient_quota',
  'server_error',
  'server_is_overloaded',
  // 503s that name the internal dependency that is unavailable (retryable).
  'safety_unavailable',
  'router_unavailable',
  'inference_unavailable',
  'store_unavailable',
]);
/** One of the registered error codes. */
export type ApiErrorCode = z.infer<typeof ApiErrorCodeSchema>;
/** A registered code (autocompleted) or any other string. */
export type ApiErrorCodeLike = ApiErrorCode | (string & {});

/** The inner error object shared by HTTP bodies and WebSocket frames (OpenAI's key order). */
export const ErrorObjectSchema = z.strictObject({
  message: z.string(),
  type: ApiErrorTypeSchema,
  param: z.string().nullable(),
  code: z.string().nullable(),
});
/** `{message, type, param, code}`. */
export type ErrorObject = z.infer<typeof ErrorObjectSchema>;

/** HTTP error body: `{"error":{…}}`. */
export const HttpErrorBodySchema = z.strictObject({ error: ErrorObjectSchema });
/** HTTP error body type. */
export type HttpErrorBody = z.infer<typeof HttpErrorBodySchema>;

/**
 * WebSocket error frame (PROTOCOL.md): `status` always present, `sequence_number` only when
 * the error belongs to a response's event sequence.
 */
export const WsErrorFrameSchema = z.strictObject({
  type: z.literal('error'),
  status: z.int(),
  error: ErrorObjectSchema,
  sequence_number: z.int().optional(),
});
/** WebSocket error frame type. */
export type WsErrorFrame = z.infer<typeof WsErrorFrameSchema>;

/** `Response.error` of a failed response: the code is a plain string there, never null. */
export const ResponseErrorSchema = z.strictObject({ code: z.string(), message: z.string() });
/** `{code, message}`. */
export type ResponseError = z.infer<typeof ResponseErrorSchema>;
