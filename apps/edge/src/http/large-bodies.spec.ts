import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiKeyAuth } from '../auth';
import { LargeBodyGate } from '../turn/large-body-gate';
import { fakeDeps } from '../testing/fake-deps';
import { inPlaceJsonParser } from '../testing/in-place-json-parser';
import type { TurnDeps } from '../turn/turn-deps';
import { HttpApi } from './http-api';

/** A gate that records which stages took turns. */
class RecordingGate extends LargeBodyGate {
  readonly turns: { tenant: string; bytes: number }[] = [];
  override run<T>(tenant: string, bytes: number, stage: () => T): Promise<T> {
    if (this.isLarge(bytes)) this.turns.push({ tenant, bytes });
    return super.run(tenant, bytes, stage);
  }
}

/** An HttpApi on `deps` behind a real server on a free port; `post` sends a body to /v1/responses. */
async function serveApi(deps: TurnDeps, keys: string, maxBufferedBytes: number) {
  const api = new HttpApi({ deps, auth: new ApiKeyAuth(keys), maxBodyBytes: 1 << 22, maxBufferedBytes });
  const server: Server = createServer((req, res) => api.handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const post = async (key: string, body: string) => {
    const res = await fetch(`${base}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
    });
    return { status: res.status, json: (await res.json()) as any };
  };
  return { post, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('large HTTP bodies take turns (issue 17)', () => {
  const gate = new RecordingGate(64 * 1024);
  const { deps } = fakeDeps();
  deps.largeBodies = gate;
  let api: Awaited<ReturnType<typeof serveApi>>;
  beforeAll(async () => (api = await serveApi(deps, 'sk-hostile:hostile,sk-neighbour:neighbour', 1 << 20)));
  afterAll(() => api.close());
  const post = (key: string, body: string) => api.post(key, body);

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
  const parsed: { tenant: string; bytes: number }[] = [];
  const gate = new RecordingGate(64 * 1024, undefined, inPlaceJsonParser(parsed));
  const { deps } = fakeDeps();
  deps.largeBodies = gate;
  let api: Awaited<ReturnType<typeof serveApi>>;
  beforeAll(async () => (api = await serveApi(deps, 'sk-hostile:hostile', 1 << 21)));
  afterAll(() => api.close());
  const post = (body: string) => api.post('sk-hostile', body);

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

  it('answers a large body nested too deeply to send back serialized as any body: 400 nesting_too_deep, not a 500', async () => {
    // 150,000 nested arrays: V8's serializer recursed past its stack on such a value.
    const nest = '['.repeat(150_000) + ']'.repeat(150_000);
    const deep = await post(`{"model":"fake-model","input":"hi","metadata":{"a":${nest}}}`);
    expect(deep).toMatchObject({ status: 400, json: { error: { code: 'nesting_too_deep' } } });
    expect(parsed.at(-1)?.bytes).toBeGreaterThan(300_000); // it went to the parser
  });
});
