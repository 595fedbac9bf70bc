import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import type { muxV1 } from '@fastloop/proto';
import { DomainError, fromGrpcError, knownErrorCode } from '../grpc-errors';

/**
 * A caller's frame on a multiplexed stream (GenerateStreamRequest, ClassifyStreamRequest, and
 * ModerateStreamRequest, whose calls also take `message` frames after their start: `Msg`).
 */
export interface MuxRequestFrame<Req, Msg = never> {
  callId: number;
  op?:
    | { $case: 'start'; value: Req }
    | { $case: 'cancel'; value: muxV1.Cancel }
    | ([Msg] extends [never] ? never : { $case: 'message'; value: Msg })
    | undefined;
}

/** A server's frame on a multiplexed stream (GenerateStreamResponse, ClassifyStreamResponse). */
export interface MuxResponseFrame<Res> {
  callId: number;
  event?:
    | { $case: 'message'; value: Res }
    | { $case: 'end'; value: muxV1.End }
    | { $case: 'error'; value: muxV1.CallError }
    | undefined;
}

/** What a failed call's status and `fastloop-error` trailers would carry, as a frame. */
export function toCallError(err: unknown): muxV1.CallError {
  const domain =
    err instanceof DomainError
      ? err
      : fromGrpcError(
          isServiceError(err)
            ? err
            : { code: GrpcStatus.INTERNAL, details: err instanceof Error ? err.message : String(err) },
        );
  return { grpcStatus: domain.grpcStatus, code: domain.code, message: domain.message, retryable: domain.retryable };
}

/** The DomainError a plain call failing with the same status and trailers would have given. */
export function fromCallError(e: muxV1.CallError): DomainError {
  return new DomainError(knownErrorCode(e.code), e.message, e.grpcStatus as GrpcStatus, e.retryable);
}

function isServiceError(err: unknown): err is Partial<ServiceError> {
  return (
    typeof err === 'object' && err !== null && 'code' in err && typeof (err as { code: unknown }).code === 'number'
  );
}
