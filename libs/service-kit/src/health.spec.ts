import { healthV1 } from '@fastloop/proto';
import { createGrpcClient } from './grpc-client';
import { startGrpcServer } from './grpc-server';
import { createLogger } from './logger';

const logger = createLogger({ service: 'health-test', level: 'silent' });
const { SERVING, NOT_SERVING } = healthV1.HealthCheckResponse_ServingStatus;

describe('grpc.health.v1 Watch', () => {
  it('pushes every change, and ends with NOT_SERVING when the server closes instead of holding the close', async () => {
    const server = await startGrpcServer({ port: 0, services: [], logger });
    const client = createGrpcClient(healthV1.HealthClient, `127.0.0.1:${server.port}`);
    try {
      const seen: number[] = [];
      const call = client.watch({ service: '' });
      call.on('data', (r: healthV1.HealthCheckResponse) => seen.push(r.status));
      const ended = new Promise<void>((resolve) => {
        call.on('end', resolve);
        call.on('error', () => resolve());
      });
      const until = async (n: number) => {
        while (seen.length < n) await new Promise((r) => setTimeout(r, 5));
      };
      await until(1);
      server.health.set(true);
      await until(2);
      // A close whose grace period would outlast the test: it may only finish because watches end.
      const closed = server.close(600_000);
      await ended;
      await closed;
      expect(seen).toEqual([NOT_SERVING, SERVING, NOT_SERVING]);
    } finally {
      client.close();
    }
  });
});
