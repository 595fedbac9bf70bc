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
const BY_CODE: Partial<Record<InternalErrorCode, (ctx: FailureContext) => ApiError>> = {
  [ErrorCode.modelNotFound]: (ctx) => ApiErrors.modelNotFound(ctx.model ?? ''),
};

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
  if (own) return own(ctx);
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
