/** Shared plumbing for every fastloop service: config, logging, metrics, gRPC, health, shutdown, Redis. */
export * from './config';
export * from './logger';
export * from './metrics';
export * from './admin-server';
export * from './health';
export * from './grpc-errors';
export * from './grpc-server';
export * from './grpc-client';
export * from './internal-auth';
export * from './shutdown';
export * from './redis';
export * from './local-redis';
export * from './ports';
export * from './prng';
