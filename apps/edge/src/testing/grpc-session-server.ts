import { Metadata } from '@grpc/grpc-js';
import { responsesV1 } from '@fastloop/proto';
import { createGrpcClient, startGrpcServer, type GrpcServer } from '@fastloop/service-kit';
import { ApiKeyAuth } from '../auth';
import { responsesGrpcService } from '../grpc/responses-grpc';
import { ConnectionLimits } from '../session/connection-limits';
import { StateCacheBudget } from '../session/state-cache';
import { fakeDeps } from './fake-deps';

/** The server's settings that the gRPC session specs vary. */
export interface GrpcSessionServerOptions {
  /** API keys, as `EDGE_API_KEYS` spells them; default `sk-a:t1`. */
  keys?: string;
  /** Streams one tenant may hold open (lanes count too); default 10, of 10 in the process. */
  maxPerTenant?: number;
  /** A stream's lifetime before `websocket_connection_limit_reached`; default none. */
  maxConnectionMs?: number;
}

/**
 * For the calling `describe`: the Responses gRPC session on fake backends, served on 127.0.0.1:0 from
 * `beforeAll` to `afterAll`, and a client of it. `open(key, metadata)` opens one session stream
 * authorised as `key` (default `sk-a`), with any further metadata.
 */
export function serveGrpcSessions(options: GrpcSessionServerOptions = {}) {
  const limits = new ConnectionLimits({ maxConnections: 10, maxPerTenant: options.maxPerTenant ?? 10 });
  const { deps, backends } = fakeDeps();
  let server: GrpcServer | undefined;
  let client: responsesV1.ResponsesServiceClient | undefined;
  beforeAll(async () => {
    const binding = responsesGrpcService({
      deps,
      auth: new ApiKeyAuth(options.keys ?? 'sk-a:t1'),
      budget: new StateCacheBudget(1 << 30),
      connectionCacheBytes: 1 << 26,
      maxQueued: 4,
      maxBufferedBytes: 1 << 24,
      limits,
      maxPayloadBytes: 1 << 20,
      maxConnectionMs: options.maxConnectionMs,
    });
    server = await startGrpcServer({ port: 0, services: [binding], logger: deps.logger });
    client = createGrpcClient(responsesV1.ResponsesServiceClient, `127.0.0.1:${server.port}`);
  });
  afterAll(async () => {
    client?.close();
    await server?.close(100);
  });
  const open = (key = 'sk-a', metadata: Record<string, string> = {}) => {
    const md = new Metadata();
    md.set('authorization', `Bearer ${key}`);
    for (const [name, value] of Object.entries(metadata)) md.set(name, value);
    return client!.session(md);
  };
  return { limits, backends, open };
}
