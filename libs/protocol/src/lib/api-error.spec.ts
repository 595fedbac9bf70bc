import { ApiError, ApiErrors, asApiError, toHttpErrorBody, toResponseError, toWsErrorEvent } from './api-error';
import { HttpErrorBodySchema, WsErrorFrameSchema } from './error-schemas';

describe('ApiErrors', () => {
  it('builds previous_response_not_found exactly as PROTOCOL.md specifies', () => {
    const err = ApiErrors.previousResponseNotFound('resp_abc');
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      code: 'previous_response_not_found',
      param: 'previous_response_id',
      message: "Previous response with id 'resp_abc' not found.",
    });
  });

  it('builds the WebSocket connection limit error with a message telling the client to reconnect', () => {
    const err = ApiErrors.connectionLimitReached();
    expect(err).toMatchObject({ status: 400, code: 'websocket_connection_limit_reached' });
    expect(err.message).toMatch(/new websocket connection/i);
  });

  it('mirrors OpenAI for a bad key and an unknown model', () => {
    expect(ApiErrors.unauthorized()).toMatchObject({
      status: 401,
      type: 'invalid_request_error',
      code: 'invalid_api_key',
    });
    expect(ApiErrors.modelNotFound('gpt-x')).toMatchObject({
      status: 400,
      code: 'model_not_found',
      param: 'model',
      message: "The requested model 'gpt-x' does not exist.",
    });
  });

  it.each([
    [ApiErrors.invalidJson(), 400, 'invalid_json'],
    [ApiErrors.notFound('Response', 'resp_1'), 404, 'not_found'],
    [ApiErrors.unknownEventType('x'), 400, 'invalid_value'],
    [ApiErrors.contentBlocked(), 400, 'invalid_prompt'],
    [ApiErrors.contextLengthExceeded(), 400, 'context_length_exceeded'],
    [ApiErrors.payloadTooLarge(1024), 413, 'payload_too_large'],
    [ApiErrors.rateLimited(3), 429, 'rate_limit_exceeded'],
    [ApiErrors.insufficientQuota(), 429, 'insufficient_quota'],
    [ApiErrors.server(), 500, 'server_error'],
    [ApiErrors.unavailable(), 503, 'server_is_overloaded'],
  ])('gives %s status %i and code %s', (err, status, code) => {
    expect(err).toMatchObject({ status, code });
  });

  it('says which errors are worth retrying', () => {
    expect(ApiErrors.rateLimited(2).retryable).toBe(true);
    expect(ApiErrors.unavailable().retryable).toBe(true);
    expect(ApiErrors.insufficientQuota().retryable).toBe(false);
    expect(ApiErrors.invalidJson().retryable).toBe(false);
  });

  it('puts "try again in Ns" in rate-limit messages, which clients parse', () => {
    expect(ApiErrors.rateLimited(7).message).toMatch(/try again in 7s/);
  });
});

describe('asApiError', () => {
  it('keeps an ApiError and wraps anything else as a 500 that keeps the cause', () => {
    const api = ApiErrors.invalidJson();
    expect(asApiError(api)).toBe(api);
    const boom = new Error('boom');
    const wrapped = asApiError(boom);
    expect(wrapped).toMatchObject({ status: 500, code: 'server_error' });
    expect(wrapped.cause).toBe(boom);
    expect(wrapped.message).not.toContain('boom');
  });
});

describe('error serializers', () => {
  const err = ApiErrors.invalidRequest("Invalid type for 'temperature'.", 'temperature', 'invalid_type');

  it('renders the HTTP body as {error:{message,type,param,code}}', () => {
    const body = toHttpErrorBody(err);
    expect(body).toEqual({
      error: {
        message: "Invalid type for 'temperature'.",
        type: 'invalid_request_error',
        param: 'temperature',
        code: 'invalid_type',
      },
    });
    expect(HttpErrorBodySchema.parse(body)).toEqual(body);
  });

  it('renders a WebSocket error frame that always carries status', () => {
    const frame = toWsErrorEvent(err);
    expect(frame).toEqual({ type: 'error', status: 400, error: toHttpErrorBody(err).error });
    expect(frame).not.toHaveProperty('sequence_number');
    expect(WsErrorFrameSchema.parse(frame)).toEqual(frame);
  });

  it('adds sequence_number to the WebSocket frame only when given', () => {
    expect(toWsErrorEvent(err, 4)).toMatchObject({ sequence_number: 4 });
  });

  it('renders response.failed errors as {code, message} and never with a null code', () => {
    expect(toResponseError(ApiErrors.contextLengthExceeded('too long'))).toEqual({
      code: 'context_length_exceeded',
      message: 'too long',
    });
    expect(toResponseError(new ApiError({ status: 500, type: 'server_error', code: null, message: 'x' }))).toEqual({
      code: 'server_error',
      message: 'x',
    });
  });

  it('never serialises the cause', () => {
    const wrapped = ApiErrors.server('failed', new Error('secret detail'));
    expect(JSON.stringify(toHttpErrorBody(wrapped))).not.toContain('secret');
  });
});
