import type {
  ApiErrorCodeLike,
  ApiErrorType,
  ErrorObject,
  HttpErrorBody,
  ResponseError,
  WsErrorFrame,
} from './error-schemas';

/** Everything needed to build an {@link ApiError}. */
export interface ApiErrorInit {
  /** HTTP status; also sent as `status` in WebSocket error frames. */
  status: number;
  type: ApiErrorType;
  /** Stable machine-readable code, or null when OpenAI itself sends none. */
  code: ApiErrorCodeLike | null;
  /** Human-readable; shown to end users by most clients. */
  message: string;
  /** Offending request field in OpenAI path syntax (`input[2].call_id`), or null. */
  param?: string | null;
  /** The underlying error, kept for logs; never serialised. */
  cause?: unknown;
}

/**
 * An error that is part of the external contract: it knows its HTTP status and how to
 * render itself as an OpenAI error object. Build one through {@link ApiErrors}.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly type: ApiErrorType;
  readonly code: ApiErrorCodeLike | null;
  readonly param: string | null;

  constructor(init: ApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param ?? null;
  }

  /** True when resending the same request later may succeed (429 rate limits and 5xx). */
  get retryable(): boolean {
    if (this.status === 429) return this.code === 'rate_limit_exceeded';
    return this.status >= 500;
  }
}

const invalid = (message: string, code: ApiErrorCodeLike | null, param: string | null = null, status = 400): ApiError =>
  new ApiError({ status, type: 'invalid_request_error', code, message, param });

/** Factories for every error fastloop returns; messages mirror OpenAI's where one exists. */
export const ApiErrors = {
  /** 400: the body (or WebSocket frame) is not JSON. */
  invalidJson(): ApiError {
    return invalid(
      'We could not parse the JSON body of your request. The API expects a JSON payload, but what was sent was not valid JSON.',
      'invalid_json',
    );
  },

  /** 400: a request field is invalid; `code` defaults to `invalid_value`. */
  invalidRequest(
    message: string,
    param: string | null = null,
    code: ApiErrorCodeLike | null = 'invalid_value',
  ): ApiError {
    return invalid(message, code, param);
  },

  /** 400: a field fastloop recognises but does not support in this context. */
  unsupportedParameter(param: string, message?: string): ApiError {
    return invalid(message ?? `Unsupported parameter: '${param}'.`, 'unsupported_parameter', param);
  },

  /** 401: missing or wrong API key. OpenAI sends `invalid_request_error` here too. */
  unauthorized(message = 'Incorrect API key provided.'): ApiError {
    return invalid(message, 'invalid_api_key', null, 401);
  },

  /** 400 (as OpenAI's Responses API does, not 404): the model is unknown. */
  modelNotFound(model: string): ApiError {
    return invalid(`The requested model '${model}' does not exist.`, 'model_not_found', 'model');
  },

  /** 400: `previous_response_id` is neither in the connection cache nor in the store. */
  previousResponseNotFound(id: string): ApiError {
    return invalid(
      `Previous response with ${describeId(id)} not found.`,
      'previous_response_not_found',
      'previous_response_id',
    );
  },

  /** 404: e.g. `notFound('Response', 'resp_1')` → "Response with id 'resp_1' not found." */
  notFound(what: string, id?: string): ApiError {
    const message = id === undefined ? `${what} not found.` : `${what} with ${describeId(id)} not found.`;
    return invalid(message, 'not_found', null, 404);
  },

  /** 400: the WebSocket client sent an event type fastloop does not implement (e.g. `response.inject`). */
  unknownEventType(type: string): ApiError {
    // Same shape OpenAI uses for an unknown event on its Realtime socket: an enum violation on `type`.
    const supported = "'response.create', 'response.interrupt', 'response.processed', 'response.steer'";
    return invalid(
      `Unsupported event type '${type}': fastloop does not implement it. Supported values are: ${supported}.`,
      'invalid_value',
      'type',
    );
  },

  /** 400: the safety service refused the prompt (OpenAI's `invalid_prompt`). */
  contentBlocked(
    message = 'Invalid prompt: your prompt was flagged as potentially violating our usage policy.',
  ): ApiError {
    return invalid(message, 'invalid_prompt', null);
  },

  /** 400: the rendered prompt does not fit the model's context window. */
  contextLengthExceeded(
    message = 'Your input exceeds the context window of this model. Please adjust your input and try again.',
  ): ApiError {
    return invalid(message, 'context_length_exceeded', 'input');
  },

  /** 413: body or frame larger than `limitBytes`. */
  payloadTooLarge(limitBytes: number): ApiError {
    return invalid(`Request body too large: the maximum is ${limitBytes} bytes.`, 'payload_too_large', null, 413);
  },

  /** 400: the WebSocket reached its maximum age; the client must reconnect (and chain or resend). */
  connectionLimitReached(maxMinutes = 60): ApiError {
    return invalid(
      `Responses websocket connection limit reached (${maxMinutes} minutes). Create a new websocket connection to continue.`,
      'websocket_connection_limit_reached',
    );
  },

  /** 429: clients such as Codex parse "try again in Ns" out of the message, so include it. */
  rateLimited(retryAfterSeconds: number, message?: string): ApiError {
    return new ApiError({
      status: 429,
      type: 'requests',
      code: 'rate_limit_exceeded',
      message: message ?? `Rate limit reached. Please try again in ${retryAfterSeconds}s.`,
    });
  },

  /** 429: out of credits; clients treat this as fatal, not retryable. */
  insufficientQuota(message = 'You exceeded your current quota.'): ApiError {
    return new ApiError({ status: 429, type: 'insufficient_quota', code: 'insufficient_quota', message });
  },

  /** 500: an unexpected failure; `cause` is kept for logs only. */
  server(message = 'The server had an error while processing your request.', cause?: unknown): ApiError {
    return new ApiError({ status: 500, type: 'server_error', code: 'server_error', message, cause });
  },

  /**
   * 503: an internal dependency (`safety`, `router`, `inference`, the response `store`) cannot be
   * reached or timed out.
   * The code names it (`safety_unavailable`, …) so operators and clients can tell them apart; the
   * message never carries the peer's address or the transport's error.
   */
  dependencyUnavailable(dependency: 'safety' | 'router' | 'inference' | 'store'): ApiError {
    return new ApiError({
      status: 503,
      type: 'service_unavailable_error',
      code: `${dependency}_unavailable`,
      message: `The ${dependency === 'store' ? 'response store' : `${dependency} service`} is unavailable. Please try again later.`,
    });
  },

  /** 503: no capacity right now (OpenAI's `server_is_overloaded`, which clients retry). */
  unavailable(message = 'The server is overloaded or not ready yet. Please try again later.'): ApiError {
    return new ApiError({ status: 503, type: 'service_unavailable_error', code: 'server_is_overloaded', message });
  },
} as const;

/** Ids longer than this are described, not echoed: an error must not mirror a megabyte back. */
const MAX_ECHOED_ID_CHARS = 128;
const PRINTABLE_ID = /^[\x21-\x7e]*$/;

/**
 * `id 'resp_1'`, or for an id too long or not printable ASCII (it came from the client, and the
 * message is shown to people and logged): `id of 300000 characters`.
 */
export function describeId(id: string): string {
  if (id.length <= MAX_ECHOED_ID_CHARS && PRINTABLE_ID.test(id)) return `id '${id}'`;
  return `id of ${id.length} characters`;
}

/** Returns `err` when it already is an {@link ApiError}, else a 500 that keeps `err` as `cause`. */
export function asApiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : ApiErrors.server(undefined, err);
}

/** The inner object shared by every error serialisation. */
function errorObject(err: ApiError): ErrorObject {
  return { message: err.message, type: err.type, param: err.param, code: err.code };
}

/** HTTP error body: `{"error":{"message","type","param","code"}}`. */
export function toHttpErrorBody(err: ApiError): HttpErrorBody {
  return { error: errorObject(err) };
}

/**
 * WebSocket error frame, per PROTOCOL.md: `{type:"error", status, error:{…}}`. `status` is
 * always present; `sequence_number` only when the error belongs to a response's event
 * sequence and the caller passes the number.
 */
export function toWsErrorEvent(err: ApiError, sequenceNumber?: number): WsErrorFrame {
  const frame: WsErrorFrame = {
    type: 'error',
    status: err.status,
    error: errorObject(err),
  };
  if (sequenceNumber !== undefined) frame.sequence_number = sequenceNumber;
  return frame;
}

/**
 * The `error` of a failed Response (`response.failed`): `{code, message}`. The code is never
 * null there, so an error without one is reported as `server_error`.
 */
export function toResponseError(err: ApiError): ResponseError {
  return { code: err.code ?? 'server_error', message: err.message };
}
