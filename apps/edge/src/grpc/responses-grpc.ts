import { randomUUID } from 'node:crypto';
import { status as GrpcStatus, type ServerDuplexStream, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { responsesV1 } from '@fastloop/proto';
import { ApiErrors } from '@fastloop/protocol';
import type { GrpcServiceBinding } from '@fastloop/service-kit';
import type { ApiKeyAuth } from '../auth';
import type { TurnDeps } from '../turn/turn-deps';
import { ConnectionStateCache, type StateCacheBudget } from '../session/state-cache';
import { ResponsesSession, type StateLoader } from '../session/responses-session';
import type { ConnectionLimits } from '../session/connection-limits';

export interface ResponsesGrpcOptions {
  deps: TurnDeps;
  auth: ApiKeyAuth;
  budget: StateCacheBudget;
  loader?: StateLoader;
  connectionCacheBytes: number;
  maxQueued: number;
  /** Bytes queued towards a slow caller before the stream is ended. */
  maxBufferedBytes: number;
  /** Per-process and per-tenant connection caps (shared with WebSocket mode); absent = unlimited. */
  limits?: ConnectionLimits;
  /**
   * Largest `event_json` accepted, in bytes: the HTTP body and WebSocket frame limit. Larger
   * events get a `payload_too_large` error event and the stream stays open.
   */
  maxPayloadBytes: number;
}

/**
 * `fastloop.responses.v1.ResponsesService/Session`: the WebSocket session core over a gRPC bidi
 * stream for internal callers. Auth is the same Bearer key, in the `authorization` metadata.
 */
export function responsesGrpcService(
  options: ResponsesGrpcOptions,
): GrpcServiceBinding & { sessions: Set<ResponsesSession> } {
  const sessions = new Set<ResponsesSession>();
  const implementation: responsesV1.ResponsesServiceServer = {
    session(call: ServerDuplexStream<responsesV1.SessionRequest, responsesV1.SessionResponse>) {
      const header = call.metadata.get('authorization')[0];
      const principal = options.auth.authenticate(typeof header === 'string' ? header : undefined);
      if (!principal) {
        call.emit('error', { code: GrpcStatus.UNAUTHENTICATED, details: 'Incorrect API key provided.' });
        return;
      }
      const slot = options.limits?.acquire(principal.tenant) ?? (() => undefined);
      if (typeof slot !== 'function') {
        call.emit('error', { code: GrpcStatus.RESOURCE_EXHAUSTED, details: slot.message });
        return;
      }
      const { deps } = options;
      const logger = deps.logger.child({ connectionId: randomUUID(), tenant: principal.tenant, transport: 'grpc' });
      const session = new ResponsesSession({
        deps,
        principal,
        transport: 'grpc',
        cache: new ConnectionStateCache(options.budget, options.connectionCacheBytes, deps.metrics),
        loader: options.loader,
        send: (event) => {
          if (call.writableEnded || call.destroyed) return;
          if (call.writableLength > options.maxBufferedBytes) {
            logger.warn({ buffered: call.writableLength }, 'client reads too slowly; ending the stream');
            // Queued turns are cancelled and the slot freed at once.
            release();
            call.destroy(new Error('client too slow'));
            return;
          }
          call.write({ type: event.type, eventJson: JSON.stringify(event) });
        },
        logger,
        maxQueued: options.maxQueued,
      });
      sessions.add(session);
      deps.metrics.connections.inc({ transport: 'grpc' });
      call.on('data', (msg: responsesV1.SessionRequest) => {
        // Characters first: no UTF-8 text is shorter in bytes, so only a borderline event is measured.
        const text = msg.eventJson;
        if (
          text.length > options.maxPayloadBytes ||
          (text.length * 3 > options.maxPayloadBytes && Buffer.byteLength(text) > options.maxPayloadBytes)
        ) {
          return session.sendError(ApiErrors.payloadTooLarge(options.maxPayloadBytes));
        }
        session.receive(text);
      });
      let released = false;
      const release = () => {
        session.close();
        if (released) return;
        released = true;
        sessions.delete(session);
        slot();
        deps.metrics.connections.dec({ transport: 'grpc' });
      };
      const end = () => {
        if (!sessions.delete(session)) return;
        void session.whenIdle().then(() => {
          release();
          if (!call.writableEnded) call.end();
        });
      };
      // The client half-closing means "no more requests": finish what is queued, then end.
      call.on('end', end);
      call.on('cancelled', release);
      call.on('error', release);
      call.on('close', release);
    },
  };
  return {
    name: 'fastloop.responses.v1.ResponsesService',
    definition: responsesV1.ResponsesServiceService,
    implementation: implementation as unknown as UntypedServiceImplementation,
    sessions,
  };
}
