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
