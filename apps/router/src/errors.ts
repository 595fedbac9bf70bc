import { status as GrpcStatus } from '@grpc/grpc-js';
import { DomainError, ErrorCode } from '@fastloop/service-kit';

// The router's codes (service-kit's ErrorCode): `model_not_found` (NOT_FOUND; the edge answers 404
// `model_not_found`) and `no_worker_available` (UNAVAILABLE, retryable).

/** The model a client named is not in the catalog. The message is the one OpenAI's API uses. */
export function modelNotFound(name: string): DomainError {
  return new DomainError(
    ErrorCode.modelNotFound,
    `The model '${name}' does not exist or you do not have access to it.`,
    GrpcStatus.NOT_FOUND,
    false,
  );
}

/** No healthy worker can take the request; workers come and go, so the caller may retry. */
export function noWorkerAvailable(model: string): DomainError {
  return new DomainError(
    ErrorCode.noWorkerAvailable,
    `No inference worker is available for model '${model}' right now; retry shortly.`,
    GrpcStatus.UNAVAILABLE,
    true,
  );
}
