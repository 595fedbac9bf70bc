import {
  getProfile,
  RenderDeadlineError,
  RenderLimitError,
  TokenBudgetExceededError,
  type ConversationEntry,
  type RenderHeader,
} from '@fastloop/model-profiles';
import fc from 'fast-check';
import { Registry } from '@fastloop/service-kit';
import { describeWhenAvailable, testModel } from '@fastloop/test-kit';
import { deserializeJson, MAX_SERIALIZED_DEPTH, type ParsedJson } from './json-task';
import { createRenderPool, type RenderPool, type RenderPoolOptions } from './render-pool';

const PROFILE = 'harmony-o200k';
const header: RenderHeader = {
  instructions: 'Be brief.',
  tools: [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
};
const entries: ConversationEntry[] = [
  { kind: 'message', role: 'user', text: 'Weather in Paris? 日本語 🦀' },
  { kind: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}', callId: 'c1' },
  { kind: 'function_call_output', name: 'get_weather', output: ' '.repeat(4 << 20), callId: 'c1' },
];

jest.setTimeout(180_000);

let pool: RenderPool;
beforeAll(async () => {
  // Jest runs this file without tsx; the worker script is TypeScript, and a thread compiling it on a
  // loaded machine took more than 10 s in CI. These tests check results, not speed: the threads
  // start (warm) before any test, and the budget is far above any rendering here.
  pool = createRenderPool({ size: 2, timeoutMs: 120_000, execArgv: ['--import', 'tsx'] });
  await pool.warm!([PROFILE]);
});
afterAll(() => pool.close());

describe('createRenderPool', () => {
  it('renders on a thread exactly what the profile renders in place', async () => {
    const profile = getProfile(PROFILE);
    const result = await pool.render({ profileId: PROFILE, header, entries }, { tenant: 't' });
    expect(result.header).toEqual(profile.renderHeader(header));
    expect(result.entries).toEqual(entries.map((e) => profile.renderEntry(e)));
  });

  it('parses JSON on a thread to what JSON.parse gives in place, and says when bytes are not JSON', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        const text = JSON.stringify(value);
        const parsed = deserializeJson(await pool.parseJson(Buffer.from(text), { tenant: 't' }));
        // toEqual: the value is built in Node's realm, not the test's (toStrictEqual compares constructors).
        expect(parsed).toEqual({ ok: true, value: JSON.parse(text) });
      }),
      { numRuns: 200 },
    );
    // An own `__proto__` key stays data, as JSON.parse makes it; the caller's bytes (a view into a
    // larger buffer) are copied, not detached.
    const backing = Buffer.from(' {"__proto__":{"polluted":1},"a":"日本語 🦀"} ');
    const view = backing.subarray(1, backing.length - 1);
    const parsed = deserializeJson(await pool.parseJson(view, { tenant: 't' }));
    expect(parsed.ok && Object.keys(parsed.value as object)).toEqual(['__proto__', 'a']);
    expect(parsed.ok && (parsed.value as { polluted?: number }).polluted).toBeUndefined();
    expect(view.toString()).toBe(backing.toString().trim());
    // Bytes that fill a buffer of their own are handed over: detached, not copied.
    const own = Buffer.from(new TextEncoder().encode(JSON.stringify({ big: 'x'.repeat(300_000) })).buffer);
    expect(own.byteOffset === 0 && own.byteLength === own.buffer.byteLength).toBe(true);
    expect(deserializeJson(await pool.parseJson(own, { tenant: 't' }))).toEqual({
      ok: true,
      value: { big: 'x'.repeat(300_000) },
    });
    expect(own.buffer.byteLength).toBe(0);
    for (const bad of ['{', '', '{"a":1}x', '\uFEFF{}'])
      await expect(pool.parseJson(Buffer.from(bad), { tenant: 't' })).resolves.toEqual({ ok: false });
    expect(deserializeJson(await pool.parseJson(Buffer.from([0x22, 0xff, 0x22]), { tenant: 't' }))).toEqual({
      ok: true,
      value: '\uFFFD', // invalid UTF-8 decodes as Buffer#toString does, to the replacement character
    });
  });

  it('sends a value nested deeper than it serializes back cut at that depth', async () => {
    const nested = (depth: number) => Buffer.from('['.repeat(depth) + ']'.repeat(depth));
    const depthOf = (parsed: ParsedJson) => {
      let depth = 0;
      for (let node = parsed.ok ? parsed.value : undefined; Array.isArray(node); node = node[0]) depth++;
      return depth;
    };
    expect(depthOf(deserializeJson(await pool.parseJson(nested(MAX_SERIALIZED_DEPTH), { tenant: 't' })))).toBe(
      MAX_SERIALIZED_DEPTH,
    );
    // 10,000 levels overflowed V8's serializer on a thread (a 500); cut, validation refuses it (400).
    const deep = deserializeJson(await pool.parseJson(nested(10_000), { tenant: 't' }));
    expect(depthOf(deep)).toBe(MAX_SERIALIZED_DEPTH);
  });

  it('shows its running and waiting renderings as a gauge', async () => {
    const registry = new Registry();
    const metered = createRenderPool({ size: 1, registry, execArgv: ['--import', 'tsx'] });
    try {
      expect(await registry.metrics()).toMatch(/fastloop_edge_render_pool_tasks\{state="running"\} 0/);
    } finally {
      await metered.close();
    }
  });

  it('warms every thread with the profiles it is given, and never rejects', async () => {
    await expect(pool.warm!([PROFILE])).resolves.toBeUndefined();
    await expect(pool.warm!(['gguf:/no/such/file.gguf'])).resolves.toBeUndefined();
    const result = await pool.render({ profileId: PROFILE, entries: entries.slice(0, 1) }, { tenant: 't' });
    expect(result.entries).toHaveLength(1);
  });

  it('gives the in-place errors back: token budget, rendering limits with the tool', async () => {
    await expect(
      pool.render({ profileId: PROFILE, entries, limits: { maxTokens: 100 } }, { tenant: 't' }),
    ).rejects.toBeInstanceOf(TokenBudgetExceededError);
    const err = await pool
      .render({ profileId: PROFILE, header, entries: [], limits: { maxToolChars: 10 } }, { tenant: 't' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RenderLimitError);
    expect(err).toMatchObject({ limit: 'tool_rendered_chars', value: 10, tool: { name: 'get_weather' } });
  });

  /** A long random word: no closed form, tokenized in chunks (tens of ms per 100,000 characters). */
  const word = (n: number): ConversationEntry => {
    let text = '';
    for (let i = 0; i < n; i++) text += String.fromCharCode(97 + ((i * 7919) % 26));
    return { kind: 'message', role: 'user', text };
  };

  /** Runs `test` on a warmed pool of `options`, closed after it however it ends. */
  async function withPool(options: RenderPoolOptions, test: (pool: RenderPool) => Promise<void>): Promise<void> {
    const pool = createRenderPool({ ...options, execArgv: ['--import', 'tsx'] });
    try {
      await pool.warm!([PROFILE]);
      await test(pool);
    } finally {
      await pool.close();
    }
  }

  it("paces each tenant's time on the threads: a tenant in debt waits, another tenant does not", async () => {
    // 100 ms of thread time per second: after a rendering of tens of ms, tenant a owes a fraction of a second.
    // The wait for the pace counts in the budget: a budget far above any debt here.
    await withPool({ size: 2, timeoutMs: 60_000, pace: { perSecond: 100, burst: 1 } }, async (paced) => {
      await paced.render({ profileId: PROFILE, entries: [word(100_000)] }, { tenant: 'a' });
      // Unpaced, a's tiny rendering would end before b's larger one; paced, a waits out its debt.
      const order: string[] = [];
      await Promise.all([
        paced.render({ profileId: PROFILE, entries: entries.slice(0, 1) }, { tenant: 'a' }).then(() => order.push('a')),
        paced.render({ profileId: PROFILE, entries: [word(20_000)] }, { tenant: 'b' }).then(() => order.push('b')),
      ]);
      expect(order).toEqual(['b', 'a']);
    });
  });

  it("counts the wait for the tenant's pace in the budget, and gives up when the caller aborts", async () => {
    // 1 ms of thread time per second: a rendering of tens of ms leaves tenant a in debt for tens of seconds,
    // far longer than the 2 s budget, which leaves the first rendering room on a loaded machine.
    await withPool({ size: 1, timeoutMs: 2_000, pace: { perSecond: 1, burst: 1 } }, async (paced) => {
      await paced.render({ profileId: PROFILE, entries: [word(100_000)] }, { tenant: 'a' });
      await expect(
        paced.render({ profileId: PROFILE, entries: entries.slice(0, 1) }, { tenant: 'a' }),
      ).rejects.toBeInstanceOf(RenderDeadlineError);
      const controller = new AbortController();
      const aborted = paced.render(
        { profileId: PROFILE, entries: entries.slice(0, 1) },
        { tenant: 'a', signal: controller.signal },
      );
      controller.abort(new Error('client gone'));
      await expect(aborted).rejects.toThrow('client gone');
      // Another tenant is not held by a's debt.
      await expect(
        paced.render({ profileId: PROFILE, entries: entries.slice(0, 1) }, { tenant: 'b' }),
      ).resolves.toBeDefined();
    });
  });

  it('stops a rendering that overruns its budget with a RenderDeadlineError', async () => {
    const tight = createRenderPool({ size: 1, timeoutMs: 5, execArgv: ['--import', 'tsx'] });
    try {
      // A long random word: no closed form, merged in chunks, ~0.3 s per MB.
      let word = '';
      for (let i = 0; i < 4_000_000; i++) word += String.fromCharCode(97 + ((i * 7919) % 26));
      const heavy: ConversationEntry = { kind: 'message', role: 'user', text: word };
      await expect(tight.render({ profileId: PROFILE, entries: [heavy] }, { tenant: 't' })).rejects.toBeInstanceOf(
        RenderDeadlineError,
      );
    } finally {
      await tight.close();
    }
  });
});

const model = testModel();

describeWhenAvailable(model)('createRenderPool with a GGUF profile', () => {
  it('loads the model file on each of its threads and renders with it', async () => {
    // (In place, the GGUF profile needs node-llama-cpp's ESM import, which this Jest run lacks:
    // the threads' two renderings are compared with each other instead.)
    const id = `gguf:${model.path}`;
    await pool.warm!([id]);
    const story: ConversationEntry[] = [{ kind: 'message', role: 'user', text: 'Once upon a time '.repeat(500) }];
    const [a, b] = await Promise.all(
      ['t1', 't2'].map((tenant) => pool.render({ profileId: id, entries: story }, { tenant })),
    );
    expect(a.entries[0].length).toBeGreaterThan(500);
    expect(b).toEqual(a);
  });
});
