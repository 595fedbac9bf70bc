import { createServer, connect, type AddressInfo, type Server } from 'node:net';
import { LINK_PRESETS, startLinkEmulator, type LinkEmulator, type LinkProfile } from './link-emulator';

/** An echo-free sink: answers every request line with `size` bytes. */
async function startServer(size: number): Promise<Server> {
  const server = createServer((s) => {
    let seen = 0;
    s.on('data', (d) => {
      seen += d.length;
      if (seen >= 100_000) s.end(Buffer.alloc(size, 7));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}

/** Sends 100 kB, waits for the whole reply and the end; resolves with ms and bytes received. */
function roundTrip(port: number): Promise<{ ms: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let bytes = 0;
    const c = connect({ host: '127.0.0.1', port }, () => c.write(Buffer.alloc(100_000, 1)));
    c.on('data', (d) => (bytes += d.length));
    c.on('end', () => {
      c.end();
      resolve({ ms: performance.now() - t0, bytes });
    });
    c.on('error', reject);
  });
}

describe('startLinkEmulator', () => {
  let server: Server;
  const emulators: LinkEmulator[] = [];
  beforeAll(async () => {
    server = await startServer(500_000);
  });
  afterAll(async () => {
    await Promise.all(emulators.map((e) => e.close()));
    await new Promise((r) => server.close(r));
  });
  const through = async (profile: LinkProfile) => {
    const e = await startLinkEmulator({ host: '127.0.0.1', port: (server.address() as AddressInfo).port }, profile);
    emulators.push(e);
    return roundTrip(e.port);
  };

  it('forwards every byte both ways and the end of the stream, unshaped on the same-host preset', async () => {
    const r = await through(LINK_PRESETS['same-host']);
    expect(r.bytes).toBe(500_000);
  });

  it('makes a transfer take at least its upload and download time plus one round trip', async () => {
    // 100 kB up at 8 Mbit/s = 100 ms; 500 kB down at 40 Mbit/s = 100 ms; RTT 40 ms.
    const r = await through({
      name: 'slow',
      upBitsPerSecond: 8e6,
      downBitsPerSecond: 40e6,
      rttMs: 40,
      description: 'test',
    });
    expect(r.bytes).toBe(500_000);
    expect(r.ms).toBeGreaterThanOrEqual(230);
    // A generous bound that only proves it does not hang.
    expect(r.ms).toBeLessThan(10_000);
  });

  it('closes idempotently', async () => {
    const e = await startLinkEmulator(
      { host: '127.0.0.1', port: (server.address() as AddressInfo).port },
      LINK_PRESETS.cloud,
    );
    await Promise.all([e.close(), e.close()]);
  });
});
