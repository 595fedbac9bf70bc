import { status as GrpcStatus, type ServerDuplexStream, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { responsesV1 } from '@fastloop/proto';
import { TIMING_HEADER } from '@fastloop/protocol';
import type { GrpcServiceBinding } from '@fastloop/service-kit';
import type { ApiKeyAuth } from '../auth';
import { Connection, saysTrue, type ConnectionIo, type ConnectionSettings } from '../session/connection';
import { eventJson } from '../session/event-json';
import type { ConnectionLimits } from '../session/connection-limits';
import { decodeSessionRequestBytes, type SessionRequestBytes } from './session-request-bytes';

type SessionCall = ServerDuplexStream<SessionRequestBytes, responsesV1.SessionResponse>;

/**
 * The metadata key by which a client asks for batched messages: the events one piece of work emits
 * together come as one `SessionResponse` (the first, then `more`), not one message each.
 */
export const EVENT_BATCH_HEADER = 'x-fastloop-event-batch';

/**
 * The gRPC session's options: the connection core's settings, as WebSocket mode has them (an
 * `event_json` over `maxPayloadBytes` gets a `payload_too_large` error event and the stream stays
 * open; `maxConnectionMs` ends a stream with `websocket_connection_limit_reached`, as a socket).
 */
export interface ResponsesGrpcOptions extends ConnectionSettings {
  auth: ApiKeyAuth;
  /** Per-process and per-tenant connection caps (shared with WebSocket mode); absent = unlimited. */
  limits?: ConnectionLimits;
}

/**
 * `fastloop.responses.v1.ResponsesService/Session`: WebSocket mode over a gRPC bidi stream for
 * internal callers, a thin adapter of the same {@link Connection} core. Auth is the same Bearer
 * key, in the `authorization` metadata.
 */
export function responsesGrpcService(
  options: ResponsesGrpcOptions,
): GrpcServiceBinding & { connections: Set<Connection> } {
  const connections = new Set<Connection>();
  const implementation = {
    session(call: SessionCall) {
      const connection = open(options, call, connections);
      if (!connection) return;
      call.on('data', (msg: SessionRequestBytes) => connection.receive(msg.eventJson, msg.eventJson.length));
      // The client half-closing means "no more requests": finish what is queued, then end.
      call.on('end', () => void connection.finishInput());
      const release = () => connection.release();
      call.on('cancelled', release);
      call.on('error', release);
      call.on('close', release);
    },
  };
  return {
    name: 'fastloop.responses.v1.ResponsesService',
    definition: {
      ...responsesV1.ResponsesServiceService,
      session: { ...responsesV1.ResponsesServiceService.session, requestDeserialize: decodeSessionRequestBytes },
    },
    implementation: implementation as unknown as UntypedServiceImplementation,
    connections,
  };
}

/** Authenticates the call and takes its slot: its connection, or undefined when the call was refused. */
function open(options: ResponsesGrpcOptions, call: SessionCall, connections: Set<Connection>): Connection | undefined {
  const header = call.metadata.get('authorization')[0];
  const principal = options.auth.authenticate(typeof header === 'string' ? header : undefined);
  if (!principal) {
    call.emit('error', { code: GrpcStatus.UNAUTHENTICATED, details: 'Incorrect API key provided.' });
    return undefined;
  }
  const releaseSlot = options.limits?.acquire(principal.tenant) ?? (() => undefined);
  if (typeof releaseSlot !== 'function') {
    call.emit('error', { code: GrpcStatus.RESOURCE_EXHAUSTED, details: releaseSlot.message });
    return undefined;
  }
  const ended = () => call.writableEnded || call.destroyed;
  const writer = eventWriter(call, saysTrue(call.metadata.get(EVENT_BATCH_HEADER)[0]), ended);
  const connection: Connection = new Connection(
    options,
    {
      principal,
      transport: 'grpc',
      releaseSlot,
      timing: saysTrue(call.metadata.get(TIMING_HEADER)[0]),
      onReleased: () => connections.delete(connection),
    },
    {
      writable: () => !ended(),
      bufferedBytes: () => call.writableLength,
      write: writer.write,
      cut: () => call.destroy(new Error('client too slow')),
      end: () => {
        connection.release();
        writer.flush();
        if (!ended()) call.end();
      },
    },
  );
  connections.add(connection);
  return connection;
}

/**
 * Writes server events to the call: one message each, or, `batched`, the events emitted before the
 * microtasks already queued have run as one message (as microtask-cork.ts does for WebSocket
 * frames), so a chunk's deltas and item boundaries, or an item's done events with the terminal
 * event, cost one serialization and one HTTP/2 DATA frame instead of one each: a fake turn's 9
 * messages become 6 and its edge CPU ≈ 1,000–1,100 → 870–920 µs (apps/edge/bench/grpc-batch.bench.ts).
 */
function eventWriter(
  call: SessionCall,
  batched: boolean,
  ended: () => boolean,
): { write: ConnectionIo['write']; flush: () => void } {
  let batch: responsesV1.SessionResponse | undefined;
  const flush = () => {
    const message = batch;
    batch = undefined;
    if (message && !ended()) call.write(message);
  };
  const write: ConnectionIo['write'] = (event) => {
    const message = { type: event.type, eventJson: eventJson(event), more: [] };
    if (!batched) call.write(message);
    else if (batch) batch.more.push(message);
    else {
      batch = message;
      queueMicrotask(flush);
    }
  };
  return { write, flush };
}
