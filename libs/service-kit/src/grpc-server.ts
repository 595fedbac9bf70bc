import { Server, ServerCredentials, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { healthV1 } from '@fastloop/proto';
import { HealthState } from './health';
import { internalAuthServerInterceptor } from './internal-auth';

export interface GrpcServiceBinding {
  /** Fully qualified service name, e.g. `fastloop.safety.v1.SafetyService` (used for health). */
  name: string;
  definition: ServiceDefinition;
  implementation: UntypedServiceImplementation;
  /** Called when the server starts draining, before it stops accepting (ends multiplexed streams). */
  drain?: () => void;
}

export interface GrpcServerOptions {
  /** Port; 0 picks a free one. */
  port: number;
  /** Bind address; default 127.0.0.1 (0.0.0.0 in containers). */
  host?: string;
  services: readonly GrpcServiceBinding[];
  logger: Logger;
  /** Max inbound message size in bytes; default 64 MiB (full prompts of long conversations). */
  maxReceiveMessageLength?: number;
  /**
   * Internal services pass FASTLOOP_INTERNAL_TOKEN here: calls without it are refused with
   * UNAUTHENTICATED (health checks stay open). Passing the key with `undefined` logs a warning that
   * the service accepts any caller; leaving it out (the edge's public gRPC) checks nothing.
   */
  internalToken?: string;
}

export interface GrpcServer {
  readonly port: number;
  readonly health: HealthState;
  /** Stops accepting calls, waits for in-flight ones up to `graceMs`, then forces. Idempotent. */
  close(graceMs?: number): Promise<void>;
}

/** Starts a gRPC server with the given services plus grpc.health.v1 (NOT_SERVING until set). */
export async function startGrpcServer(options: GrpcServerOptions): Promise<GrpcServer> {
  if ('internalToken' in options && !options.internalToken) {
    options.logger.warn('FASTLOOP_INTERNAL_TOKEN is unset: this internal gRPC service accepts any caller');
  }
  const server = new Server({
    'grpc.max_receive_message_length': options.maxReceiveMessageLength ?? 64 * 1024 * 1024,
    'grpc.keepalive_permit_without_calls': 1,
    interceptors: options.internalToken ? [internalAuthServerInterceptor(options.internalToken)] : [],
  });
  const health = new HealthState(options.services.map((s) => s.name));
  server.addService(healthV1.HealthService, health.implementation() as unknown as UntypedServiceImplementation);
  for (const s of options.services) server.addService(s.definition, s.implementation);
  const host = options.host ?? '127.0.0.1';
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${options.port}`, ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
  });
  options.logger.info({ port, services: options.services.map((s) => s.name) }, 'gRPC server listening');
  let closing: Promise<void> | undefined;
  return {
    port,
    health,
    close(graceMs = 10_000) {
      closing ??= new Promise<void>((resolve) => {
        health.set(false);
        health.endWatches();
        for (const s of options.services) s.drain?.();
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        timer.unref();
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      return closing;
    },
  };
}
