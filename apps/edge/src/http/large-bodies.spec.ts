import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiKeyAuth } from '../auth';
import { LargeBodyGate } from '../turn/large-body-gate';
import { fakeDeps } from '../testing/fake-deps';
import { inPlaceJsonParser } from '../testing/in-place-json-parser';
import { HttpApi } from './http-api';

/** A gate that records which stages took turns. */
class RecordingGate extends LargeBodyGate {
  readonly turns: { tenant: string; bytes: number }[] = [];
  override run<T>(tenant: string, bytes: number, stage: () => T): Promise<T> {
    if (this.isLarge(bytes)) this.turns.push({ tenant, bytes });
    return super.run(tenant, bytes, stage);
  }
}

describe('large HTTP bodies take turns (issue 17)', () => {
  let server: Server;
  let base: string;
  const gate = new RecordingGate(64 * 1024);
  const { deps } = fakeDeps();
  deps.largeBodies = gate;

  beforeAll(async () => {
    const auth = new ApiKeyAuth('sk-hostile:hostile,sk-neighbour:neighbour');
    const api = new HttpApi({ deps, auth, maxBodyBytes: 1 << 22, maxBufferedBytes: 1 << 20 });
    server = createServer((req, res) => api.handle(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise((r) => server.close(r)));

  const post = async (key: string, body: string) => {
    const res = await fetch(`${base}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
    });
    return { status: res.status, json: (await res.json()) as any };
  };

  it("decodes, parses and validates a large body in three turns, then checks its Classify call against safety's bounds and encodes it in two, while a small request takes none", async () => {
    const text = 'word '.repeat(20_000); // 100,000 characters
    const large = JSON.stringify({ model: 'fake-model', input: text, max_output_tokens: 16 });
    const [hostile, neighbour] = await Promise.all([
      post('sk-hostile', large),
      post('sk-neighbour', JSON.stringify({ model: 'fake-model', input: 'hi', max_output_tokens: 16 })),
    ]);
    expect(hostile.status).toBe(200);
    expect(neighbour.status).toBe(200);
    expect(gate.turns.map((t) => t.tenant)).toEqual(['hostile', 'hostile', 'hostile', 'hostile', 'hostile']);
    expect(gate.turns.slice(0, 3).every((t) => t.bytes === Buffer.byteLength(large))).toBe(true);
    expect(gate.queued).toBe(0);
  });

  it('answers a flood of large bad bodies 400 invalid_json and serves the neighbour', async () => {
    const bad = '{"model":"fake-model","input":"' + 'x'.repeat(200_000);
    const flood = Array.from({ length: 4 }, () => post('sk-hostile', bad));
    const neighbour = await post('sk-neighbour', '{');
    expect(neighbour).toMatchObject({ status: 400, json: { error: { code: 'invalid_json' } } });
    for (const r of await Promise.all(flood)) expect(r.json.error.code).toBe('invalid_json');
    expect(gate.queued).toBe(0);
  });
});

describe('large HTTP bodies parsed off the event loop', () => {
  let server: Server;
  let base: string;
  const parsed: { tenant: string; bytes: number }[] = [];
  const gate = new RecordingGate(64 * 1024, undefined, inPlaceJsonParser(parsed));
  const { deps } = fakeDeps();
  deps.largeBodies = gate;

  beforeAll(async () => {
    const auth = new ApiKeyAuth('sk-hostile:hostile');
    const api = new HttpApi({ deps, auth, maxBodyBytes: 1 << 22, maxBufferedBytes: 1 << 21 });
    server = createServer((req, res) => api.handle(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise((r) => server.close(r)));

  const post = async (body: string) => {
    const res = await fetch(`${base}/v1/responses`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-hostile', 'content-type': 'application/json' },
      body,
    });
    return { status: res.status, json: (await res.json()) as any };
  };

  it('hands a large body to the parser and takes turns only to read its value back, validate it, and check and encode its Classify call; a small one is parsed here', async () => {
    const large = JSON.stringify({ model: 'fake-model', input: 'word '.repeat(20_000), max_output_tokens: 16 });
    const bad = '{"model":"fake-model","input":"' + 'x'.repeat(200_000);
    const [ok, invalid, small] = await Promise.all([
      post(large),
      post(bad),
      post(JSON.stringify({ model: 'fake-model', input: 'hi', max_output_tokens: 16 })),
    ]);
    expect(ok.status).toBe(200);
    expect(ok.json.output.length).toBeGreaterThan(0);
    expect(invalid).toMatchObject({ status: 400, json: { error: { code: 'invalid_json' } } });
    expect(small.status).toBe(200);
    expect(parsed.map((p) => p.bytes).sort()).toEqual([Buffer.byteLength(bad), Buffer.byteLength(large)].sort());
    // The large body's reading back, validation, its Classify call's check and encoding, and the bad
    // body's (empty) reading back; no decode or parse turn.
    expect(gate.turns).toHaveLength(5);
  });
});
