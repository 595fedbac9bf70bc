import { ApiError, ApiErrors } from '@fastloop/protocol';
import { DomainError, ErrorCode, type InternalErrorCode } from '@fastloop/service-kit';

/** A service the edge calls; named in the 503 a retryable failure of it answers. */
export type Dependency = 'safety' | 'router' | 'inference';

/** What a translation may need beyond the error: the dependency that failed and the request's model. */
export interface FailureContext {
  from: Dependency;
  model?: string;
}

/** Internal codes that mean something of their own to a client; every other code is a 503 or a 500. */
const BY_CODE: Partial<Record<InternalErrorCode, (ctx: FailureContext, err: DomainError) => ApiError>> = {
  [ErrorCode.modelNotFound]: (ctx) => ApiErrors.modelNotFound(ctx.model ?? ''),
  // The safety service's bounds on what one call scans (its message is ours and names the limit:
  // `SAFETY_MAX_ITEM_BYTES`, `SAFETY_MAX_REQUEST_BYTES`): the client must send less, so a 400.
  [ErrorCode.safetyItemTooLarge]: (_ctx, err) => tooLargeToScan(err, 'safety_item_too_large'),
  [ErrorCode.safetyRequestTooLarge]: (_ctx, err) => tooLargeToScan(err, 'safety_request_too_large'),
  // The tenant's own queue on the render pool is full: its earlier requests are still tokenizing.
  [ErrorCode.workerPoolOverloaded]: () =>
    ApiErrors.rateLimited(1, 'Too many requests of this tenant are waiting to be tokenized; retry shortly.'),
  // A render thread died under this request (replaced already), or the pool is closing: the edge's
  // own capacity, not a dependency's.
  [ErrorCode.workerCrashed]: () => ApiErrors.unavailable(),
  [ErrorCode.workerPoolClosed]: () => ApiErrors.unavailable(),
};

function tooLargeToScan(err: DomainError, code: string): ApiError {
  return new ApiError({
    status: 400,
    type: 'invalid_request_error',
    code,
    message: `Invalid 'input': more text than the safety classifier scans in one request: ${err.message}.`,
    param: 'input',
    cause: err,
  });
}

/**
 * The one translation of a failure to what a client sees. An ApiError passes as it is; a
 * DomainError whose code has a meaning of its own to clients becomes that error; any other
 * failure is a 503 whose code names the dependency (`safety_unavailable`, `router_unavailable`,
 * `inference_unavailable`) when retrying may help, else a plain 500. Never the peer's message: it
 * carries addresses and transport errors (`connect ECONNREFUSED 10.0.3.7:50051`). The original
 * error stays as `cause`, for the logs.
 */
export function toApiError(err: unknown, ctx: FailureContext = { from: 'inference' }): ApiError {
  if (err instanceof ApiError) return err;
  const domain = err instanceof DomainError ? err : undefined;
  const own = domain && BY_CODE[domain.code];
  if (own) return own(ctx, domain);
  const apiErr = domain?.retryable ? ApiErrors.dependencyUnavailable(ctx.from) : ApiErrors.server();
  return new ApiError({
    status: apiErr.status,
    type: apiErr.type,
    code: apiErr.code,
    message: apiErr.message,
    cause: err,
  });
}

/** A failure of `from` as an ApiError, for a promise's catch: `.catch(failureOf('router', model))`. */
export function failureOf(from: Dependency, model?: string): (err: unknown) => never {
  return (err) => {
    throw toApiError(err, { from, model });
  };
}
