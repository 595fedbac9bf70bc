import { Metadata, status as GrpcStatus, type ServiceError as GrpcServiceError } from '@grpc/grpc-js';
import { ErrorCode, isInternalErrorCode, type InternalErrorCode } from './error-codes';

/** Metadata key carrying a domain error's stable code across a gRPC hop. */
export const ERROR_CODE_METADATA = 'fastloop-error';
/** Metadata key carrying whether the caller may retry. */
export const RETRYABLE_METADATA = 'fastloop-retryable';

/**
 * A domain error with a stable `code`, translated to a gRPC status at the server edge and back to a
 * DomainError at the client, so the edge can map it to a Responses API error without string matching.
 */
export class DomainError extends Error {
  constructor(
    readonly code: InternalErrorCode,
    message: string,
    readonly grpcStatus: GrpcStatus = GrpcStatus.INTERNAL,
    readonly retryable = false,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DomainError';
  }

  /** Whether `err` is a DomainError carrying one of `codes` (any code when none is given). */
  static is(err: unknown, ...codes: InternalErrorCode[]): err is DomainError {
    return err instanceof DomainError && (codes.length === 0 || codes.includes(err.code));
  }
}

/** The code of a DomainError; undefined for anything else. */
export function errorCodeOf(err: unknown): InternalErrorCode | undefined {
  return err instanceof DomainError ? err.code : undefined;
}

/** A code read from the wire: itself when this build knows it, else `internal`. */
export function knownErrorCode(code: string): InternalErrorCode {
  return isInternalErrorCode(code) ? code : ErrorCode.internal;
}

/** Converts any thrown value to what grpc-js sends: a status, details and the code in metadata. */
export function toGrpcError(err: unknown): Partial<GrpcServiceError> {
  const metadata = new Metadata();
  if (err instanceof DomainError) {
    metadata.set(ERROR_CODE_METADATA, err.code);
    metadata.set(RETRYABLE_METADATA, String(err.retryable));
    return { code: err.grpcStatus, details: err.message, metadata };
  }
  metadata.set(ERROR_CODE_METADATA, ErrorCode.internal);
  return { code: GrpcStatus.INTERNAL, details: err instanceof Error ? err.message : String(err), metadata };
}

/** Rebuilds a DomainError from a failed call; transport failures get codes `unavailable`/`deadline_exceeded`. */
export function fromGrpcError(err: unknown): DomainError {
  if (err instanceof DomainError) return err;
  const e = err as Partial<GrpcServiceError>;
  const code = e.metadata?.get(ERROR_CODE_METADATA)[0];
  const retryable = e.metadata?.get(RETRYABLE_METADATA)[0] === 'true';
  const status = e.code ?? GrpcStatus.UNKNOWN;
  const details = e.details ?? (err instanceof Error ? err.message : String(err));
  if (typeof code === 'string')
    return new DomainError(knownErrorCode(code), details, status, retryable, { cause: err });
  if (status === GrpcStatus.UNAVAILABLE)
    return new DomainError(ErrorCode.unavailable, details, status, true, { cause: err });
  if (status === GrpcStatus.DEADLINE_EXCEEDED)
    return new DomainError(ErrorCode.deadlineExceeded, details, status, true, { cause: err });
  if (status === GrpcStatus.CANCELLED)
    return new DomainError(ErrorCode.cancelled, details, status, false, { cause: err });
  return new DomainError(ErrorCode.internal, details, status, false, { cause: err });
}
