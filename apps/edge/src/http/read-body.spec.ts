import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiErrors, type ApiError } from '@fastloop/protocol';
import { readBody } from './read-body';

const MB = 1 << 20;

describe('readBody', () => {
  let server: Server;
  let port: number;
  let reserved: number[];
  let refuseOver: number;
  let outcome: Promise<Buffer | ApiError>;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const reserve = (n: number) => {
        reserved.push(n);
        return n > refuseOver ? ApiErrors.payloadTooLarge(refuseOver) : undefined;
      };
      outcome = readBody(req, 8 * MB, reserve).catch((err: ApiError) => err);
      void outcome.then(() => res.end('done'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((r) => server.close(r)));
  beforeEach(() => {
    reserved = [];
    refuseOver = Number.POSITIVE_INFINITY;
  });

  /** POSTs `body` in 64 KB writes, with its length declared or chunked. */
  async function post(body: Buffer, declared: boolean): Promise<Buffer | ApiError> {
    await new Promise<void>((resolve) => {
      const req = request({ port, method: 'POST', headers: declared ? { 'content-length': body.length } : {} }, (res) =>
        res.resume().on('end', resolve),
      );
      req.on('error', () => resolve());
      for (let at = 0; at < body.length; at += 64 * 1024) req.write(body.subarray(at, at + 64 * 1024));
      req.end();
    });
    return outcome;
  }

  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 7_919) % 251));

  it('reads a declared large body into place, byte for byte, reserving its length up front', async () => {
    const body = bytes(3 * MB + 17);
    expect(Buffer.compare((await post(body, true)) as Buffer, body)).toBe(0);
    expect(reserved).toEqual([body.length]);
  });

  it('reads a chunked or small body as it comes, reserving each chunk', async () => {
    const body = bytes(1 * MB + 3);
    expect(Buffer.compare((await post(body, false)) as Buffer, body)).toBe(0);
    expect(reserved.reduce((a, b) => a + b, 0)).toBe(body.length);
    expect(reserved.length).toBeGreaterThan(1);
    reserved = [];
    const small = bytes(1_000);
    expect(Buffer.compare((await post(small, true)) as Buffer, small)).toBe(0);
    expect(reserved).toEqual([1_000]);
  });

  it('refuses a declared body its bound cannot hold before reading it', async () => {
    refuseOver = 1 * MB;
    expect(await post(bytes(2 * MB), true)).toMatchObject({ status: 413 });
    expect(reserved).toEqual([2 * MB]);
  });
});
