import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { healthV1 } from '@fastloop/proto';
import { ConfigError, env, loadConfig } from './config';
import { DomainError, fromGrpcError, toGrpcError } from './grpc-errors';
import { startGrpcServer } from './grpc-server';
import { callUnary, createGrpcClient } from './grpc-client';
import { createLogger } from './logger';
import { startLocalRedis } from './local-redis';
import { createRedis } from './redis';

const silent = createLogger({ service: 'test', level: 'silent' });

describe('loadConfig', () => {
  const schema = z.object({ PORT: env.port(8080), FLAG: env.bool(false), NAMES: env.list(['a']) });

  it('applies defaults, coerces env strings and freezes the result', () => {
    const c = loadConfig(schema, { env: { PORT: '9000', FLAG: 'true' } });
    expect(c).toEqual({ PORT: 9000, FLAG: true, NAMES: ['a'] });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('names every offending field in one error', () => {
    expect(() => loadConfig(schema, { env: { PORT: 'x', FLAG: 'maybe' } })).toThrow(ConfigError);
    expect(() => loadConfig(schema, { env: { PORT: 'x', FLAG: 'maybe' } })).toThrow(/PORT.*FLAG/);
  });
});

describe('gRPC errors', () => {
  it('carry a domain error code and retryability across a real call', async () => {
    const server = await startGrpcServer({ port: 0, services: [], logger: silent });
    const client = createGrpcClient(healthV1.HealthClient, `127.0.0.1:${server.port}`);
    try {
      await expect(callUnary(client.check, client, { service: 'nope' }, { deadlineMs: 2000 })).rejects.toMatchObject({
        code: 'internal',
        grpcStatus: GrpcStatus.NOT_FOUND,
      });
      const back = fromGrpcError(
        toGrpcError(new DomainError('prefix_miss', 'no prefix', GrpcStatus.FAILED_PRECONDITION, true)),
      );
      expect(back).toMatchObject({ code: 'prefix_miss', retryable: true, grpcStatus: GrpcStatus.FAILED_PRECONDITION });
    } finally {
      client.close();
      await server.close();
    }
  });
});

describe('HealthState', () => {
  it('reports NOT_SERVING until set, then SERVING, over grpc.health.v1', async () => {
    const server = await startGrpcServer({ port: 0, services: [], logger: silent });
    const client = createGrpcClient(healthV1.HealthClient, `127.0.0.1:${server.port}`);
    try {
      const before = await callUnary(client.check, client, { service: '' }, { deadlineMs: 2000 });
      expect(before.status).toBe(healthV1.HealthCheckResponse_ServingStatus.NOT_SERVING);
      server.health.set(true);
      const after = await callUnary(client.check, client, { service: '' }, { deadlineMs: 2000 });
      expect(after.status).toBe(healthV1.HealthCheckResponse_ServingStatus.SERVING);
    } finally {
      client.close();
      await server.close();
      await server.close();
    }
  });
});

describe('startLocalRedis', () => {
  it('starts a private redis-server that answers and stops it again', async () => {
    const redis = await startLocalRedis();
    const client = createRedis(redis.url);
    try {
      await client.set('k', 'v');
      expect(await client.get('k')).toBe('v');
    } finally {
      await client.quit();
      await redis.stop();
      await redis.stop();
    }
  });
});

describe('startLocalRedis with a data folder', () => {
  it('keeps what was stored across a restart, and refuses a folder a running server uses', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'fastloop-redis-data-')), 'redis');
    try {
      const first = await startLocalRedis({ dataDir });
      await expect(startLocalRedis({ dataDir })).rejects.toMatchObject({ code: 'redis_data_dir_in_use' });
      const a = new Redis(first.url);
      await a.set('fastloop:stored', 'kept');
      // appendfsync everysec: give the append-only file its second.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      await a.quit();
      await first.stop();
      expect(existsSync(dataDir)).toBe(true);
      const second = await startLocalRedis({ dataDir });
      const b = new Redis(second.url);
      try {
        expect(await b.get('fastloop:stored')).toBe('kept');
      } finally {
        await b.quit();
        await second.stop();
      }
    } finally {
      rmSync(join(dataDir, '..'), { recursive: true, force: true });
    }
  });
});
