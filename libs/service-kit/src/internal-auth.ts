import { createHash, timingSafeEqual } from 'node:crypto';
import {
  InterceptingCall,
  Metadata,
  ResponderBuilder,
  ServerInterceptingCall,
  ServerListenerBuilder,
  status,
  type Interceptor,
  type ServerInterceptor,
} from '@grpc/grpc-js';
import { z } from 'zod';
import { ErrorCode } from './error-codes';
import { ERROR_CODE_METADATA } from './grpc-errors';

/**
 * Metadata key of the shared service-to-service token. Not `authorization`: the edge's public gRPC
 * service uses that for client API keys, and the two must never be confused.
 */
export const INTERNAL_TOKEN_METADATA = 'x-fastloop-internal-token';

/**
 * FASTLOOP_INTERNAL_TOKEN: the shared secret every internal gRPC call carries (safety, router and
 * inference check it; the edge and the router send it). At least 16 characters; unset = internal
 * services accept any caller (a warning is logged). The launcher generates one per run.
 */
export const internalTokenSchema = z.string().min(16, 'must be at least 16 characters').optional();

/** grpc.health.v1 stays open: Kubernetes' native gRPC probes cannot send metadata. */
const OPEN_PREFIX = '/grpc.health.v1.Health/';

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/**
 * Whether a presented token (an HTTP header, gRPC metadata) is `token`: compared as SHA-256
 * digests in constant time, so neither the length nor a prefix leaks through timing.
 */
export function internalTokenMatches(presented: unknown, token: string): boolean {
  return typeof presented === 'string' && timingSafeEqual(digest(presented), digest(token));
}

/**
 * A server interceptor that refuses (UNAUTHENTICATED, before the handler runs) every call without
 * the token, except health checks. Compared as SHA-256 digests in constant time.
 */
export function internalAuthServerInterceptor(token: string): ServerInterceptor {
  const expected = digest(token);
  const valid = (metadata: Metadata) => {
    const presented = metadata.get(INTERNAL_TOKEN_METADATA)[0];
    return typeof presented === 'string' && timingSafeEqual(digest(presented), expected);
  };
  return (method, call) => {
    if (method.path.startsWith(OPEN_PREFIX)) return new ServerInterceptingCall(call);
    const listener = new ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        if (valid(metadata)) next(metadata);
        else
          call.sendStatus({
            code: status.UNAUTHENTICATED,
            details: 'internal call without a valid service token',
            metadata: trailer(),
          });
      })
      .build();
    return new ServerInterceptingCall(call, new ResponderBuilder().withStart((next) => next(listener)).build());
  };
}

/** The stable code in the trailers, so callers see DomainError `unauthenticated`. */
function trailer(): Metadata {
  const m = new Metadata();
  m.set(ERROR_CODE_METADATA, ErrorCode.unauthenticated);
  return m;
}

/** A client interceptor that adds the token to every call. */
export function internalAuthClientInterceptor(token: string): Interceptor {
  return (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        metadata.set(INTERNAL_TOKEN_METADATA, token);
        next(metadata, listener);
      },
    });
}
