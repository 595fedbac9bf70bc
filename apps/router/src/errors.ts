import { status as GrpcStatus } from '@grpc/grpc-js';
import { DomainError } from '@fastloop/service-kit';

/** Stable error codes of the router, carried in the `fastloop-error` gRPC metadata. */
export const RouterErrorCode = {
  /** No model or alias of that name (NOT_FOUND, not retryable). The edge answers 404 `model_not_found`. */
  modelNotFound: 'model_not_found',
  /** The model exists but no worker is SERVING right now (UNAVAILABLE, retryable). */
  noWorkerAvailable: 'no_worker_available',
} as const;

/** The model a client named is not in the catalog. The message is the one OpenAI's API uses. */
export function modelNotFound(name: string): DomainError {
  return new DomainError(
    RouterErrorCode.modelNotFound,
    `The model '${name}' does not exist or you do not have access to it.`,
    GrpcStatus.NOT_FOUND,
    false,
  );
}

/** No healthy worker can take the request; workers come and go, so the caller may retry. */
export function noWorkerAvailable(model: string): DomainError {
  return new DomainError(
    RouterErrorCode.noWorkerAvailable,
    `No inference worker is available for model '${model}' right now; retry shortly.`,
    GrpcStatus.UNAVAILABLE,
    true,
  );
}
