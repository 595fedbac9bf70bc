import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { ApiKeyAuth } from '../auth';
import { fakeDeps } from '../testing/fake-deps';
import { HttpApi } from './http-api';
import { maxCpuMsBetweenTicks } from '@fastloop/test-kit';

// What one request may cost, in CPU time of this process (server and client both run here), so
// other processes on a loaded 2-core CI machine cannot fail it (generous: "does not hang", not speed).
const PER_REQUEST_MS = 10_000;
const MAX_LOOP_DELAY_MS = 3_000;

function nested(depth: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < depth; i++) schema = { type: 'object', properties: { a: schema }, required: ['a'] };
  return schema;
}

/** A deterministic "word" of `length` letters: one regex piece that is no vocabulary entry. */
function word(length: number, seed = 1): string {
  let x = seed;
  const out: string[] = [];
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
    out.push(String.fromCharCode(97 + (x % 26)));
  }
  return out.join('');
}

jest.setTimeout(120_000);

let server: Server;
let base: string;

beforeAll(async () => {
  const { deps } = fakeDeps();
  const api = new HttpApi({
    deps,
    auth: new ApiKeyAuth('sk-test'),
    maxBodyBytes: 64 * 1024 * 1024,
    maxBufferedBytes: 1 << 24,
  });
  server = createServer((req, res) => api.handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((r) => server.close(r)));

/** POSTs `body`; `ms` is the CPU time the process spent meanwhile. */
async function post(body: unknown): Promise<{ status: number; json: any; ms: number }> {
  const start = process.cpuUsage();
  const res = await fetch(`${base}/v1/responses`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  const used = process.cpuUsage(start);
  return { status: res.status, json, ms: (used.user + used.system) / 1_000 };
}

/** Runs `work`; returns the most CPU time (ms) spent between two turns of the event loop. */
const maxLoopDelayDuring = maxCpuMsBetweenTicks;

const tool = (parameters: unknown, name = 'f') => ({ type: 'function', name, parameters });

describe('one hostile request does not stall the edge', () => {
  it('refuses a tool schema nested 1,500 objects deep at once with a 400 naming the limit', async () => {
    const delay = await maxLoopDelayDuring(async () => {
      const r = await post({ model: 'fake-model', input: 'hi', tools: [tool(nested(1_500))] });
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'schema_too_deep', param: 'tools[0].parameters' });
      expect(r.json.error.message).toContain('max_schema_depth');
    });
    expect(delay).toBeLessThan(MAX_LOOP_DELAY_MS);
  });

  it('serves a schema at the depth limit and refuses one that renders too large for the model', async () => {
    const ok = await post({ model: 'fake-model', input: 'hi', tools: [tool(nested(31))] });
    expect(ok.status).toBe(200);
    const wide = {
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 3_000 }, (_, i) => [`property_${i}`, { type: 'string', description: 'd'.repeat(100) }]),
      ),
    };
    const r = await post({ model: 'fake-model', input: 'hi', tools: [tool({}), tool(wide, 'g')] });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'tool_too_large', param: 'tools[1]' });
  });

  it('answers 30 MB of input with context_length_exceeded without tokenizing it all', async () => {
    const items = Array.from({ length: 30 }, (_, i) => ({ role: 'user', content: word(1_000, i + 1).repeat(1_000) }));
    const r = await post({ model: 'fake-model', input: items });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('context_length_exceeded');
    expect(r.ms).toBeLessThan(PER_REQUEST_MS);
  });

  it('stops tokenizing at the context window when the size alone does not prove the overflow', async () => {
    // 3 MB of short distinct words: ~700k tokens, far over the 131k window, but under 128 chars a token.
    const text = Array.from({ length: 400_000 }, (_, i) => `w${i.toString(36)}`).join(' ');
    const delay = await maxLoopDelayDuring(async () => {
      const r = await post({ model: 'fake-model', input: text });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('context_length_exceeded');
      expect(r.ms).toBeLessThan(PER_REQUEST_MS);
    });
    expect(delay).toBeLessThan(MAX_LOOP_DELAY_MS);
  });

  it('encodes a 40 KB word in a bounded time and keeps the event loop moving', async () => {
    const delay = await maxLoopDelayDuring(async () => {
      const r = await post({ model: 'fake-model', input: `look: ${word(40_000)} ${word(200_000, 9)}` });
      expect(r.status).toBe(200);
      expect(r.ms).toBeLessThan(PER_REQUEST_MS);
    });
    expect(delay).toBeLessThan(MAX_LOOP_DELAY_MS);
  });

  it('answers adversarial shapes with the right verdict within a time bound per request (fuzz)', async () => {
    const shape = fc.record({
      depth: fc.integer({ min: 0, max: 2_000 }),
      width: fc.integer({ min: 0, max: 6_000 }),
      items: fc.integer({ min: 0, max: 12_000 }),
      wordLength: fc.integer({ min: 0, max: 100_000 }),
      metadataPairs: fc.integer({ min: 0, max: 20_000 }),
    });
    await fc.assert(
      fc.asyncProperty(shape, async ({ depth, width, items, wordLength, metadataPairs }) => {
        const wide = {
          type: 'object',
          properties: Object.fromEntries(Array.from({ length: width }, (_, i) => [`p${i}`, { type: 'string' }])),
        };
        const body = {
          model: 'fake-model',
          input: [
            ...Array.from({ length: items }, () => ({ role: 'user', content: 'x' })),
            { role: 'user', content: word(wordLength) },
          ],
          tools: [tool(nested(depth)), tool(wide, 'g')],
          metadata: Object.fromEntries(Array.from({ length: metadataPairs }, (_, i) => [`k${i}`, 'v'])),
        };
        const r = await post(body);
        expect(r.ms).toBeLessThan(PER_REQUEST_MS);
        // Every bound the request crosses; the answer names one of them (the walk's first).
        const crossed = [
          2 * depth + 1 > 64 && 'schema_too_deep',
          items + 1 > 10_000 && 'array_above_max_length',
          2 * width + 3 > 10_000 && 'schema_too_large',
        ].filter((code): code is string => typeof code === 'string');
        // zod's checks run once the shape is within bounds.
        if (crossed.length === 0 && metadataPairs > 16) crossed.push('object_above_max_properties');
        if (crossed.length === 0) expect(r.status).toBe(200);
        else {
          expect(r.status).toBe(400);
          expect(crossed).toContain(r.json.error?.code);
        }
      }),
      { numRuns: 12 },
    );
  });
});
