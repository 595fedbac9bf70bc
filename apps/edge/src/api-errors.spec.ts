import { status as GrpcStatus } from '@grpc/grpc-js';
import { ApiErrors } from '@fastloop/protocol';
import { DomainError, ErrorCode } from '@fastloop/service-kit';
import { toApiError } from './api-errors';

describe('toApiError', () => {
  it('passes an ApiError through as it is', () => {
    const err = ApiErrors.invalidRequest('bad', 'input');
    expect(toApiError(err, { from: 'router' })).toBe(err);
  });

  it('answers a retryable failure with a 503 naming the dependency, and keeps the cause out of the message', () => {
    const cause = new DomainError(
      ErrorCode.unavailable,
      'connect ECONNREFUSED 10.0.3.7:50051',
      GrpcStatus.UNAVAILABLE,
      true,
    );
    const err = toApiError(cause, { from: 'safety' });
    expect(err).toMatchObject({ status: 503, code: 'safety_unavailable' });
    expect(err.message).not.toContain('10.0.3.7');
    expect(err.cause).toBe(cause);
  });

  it("answers safety's byte bounds with a 400 naming the bound, and a full render queue with a 429", () => {
    const item = new DomainError(
      ErrorCode.safetyItemTooLarge,
      'item 2 has 4718592 bytes of text, over the 4194304-byte limit (SAFETY_MAX_ITEM_BYTES)',
      GrpcStatus.INVALID_ARGUMENT,
      false,
    );
    const err = toApiError(item, { from: 'safety' });
    expect(err).toMatchObject({ status: 400, code: 'safety_item_too_large', param: 'input' });
    expect(err.message).toMatch(/SAFETY_MAX_ITEM_BYTES/);
    const call = new DomainError(ErrorCode.safetyRequestTooLarge, 'x (SAFETY_MAX_REQUEST_BYTES)', 3, false);
    expect(toApiError(call, { from: 'safety' })).toMatchObject({ status: 400, code: 'safety_request_too_large' });
    const queue = new DomainError(ErrorCode.workerPoolOverloaded, 'full', GrpcStatus.RESOURCE_EXHAUSTED, true);
    expect(toApiError(queue)).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    const crashed = new DomainError(ErrorCode.workerCrashed, 'the worker thread died', GrpcStatus.INTERNAL, true);
    expect(toApiError(crashed)).toMatchObject({ status: 503, code: 'server_is_overloaded' });
  });

  it('answers anything else with a plain 500', () => {
    expect(toApiError(new Error('boom'))).toMatchObject({ status: 500, code: 'server_error' });
    const notRetryable = new DomainError(ErrorCode.engineError, 'engine failed', GrpcStatus.INTERNAL, false);
    expect(toApiError(notRetryable, { from: 'inference' })).toMatchObject({ status: 500, code: 'server_error' });
  });

  it('gives an internal code with a meaning to clients its own error', () => {
    const notFound = new DomainError(ErrorCode.modelNotFound, 'no such model', GrpcStatus.NOT_FOUND, false);
    expect(toApiError(notFound, { from: 'router', model: 'gpt-x' })).toEqual(ApiErrors.modelNotFound('gpt-x'));
  });
});
