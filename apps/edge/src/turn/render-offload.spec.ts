import fc from 'fast-check';
import {
  getProfile,
  TokenBudgetExceededError,
  type ConversationEntry,
  type RenderHeader,
  type RenderTask,
} from '@fastloop/model-profiles';
import { createRenderPool, type RenderPool } from '../render-pool/render-pool';
import { ResponsesSession } from '../session/responses-session';
import { ConnectionStateCache, StateCacheBudget } from '../session/state-cache';
import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { AppendLog } from './append-log';
import { EntryRenderCache } from './entry-render-cache';
import { renderFrom, type RenderedConversation } from './render-conversation';
import type { RenderJob } from './render-limits';
import { NON_ASCII_COST, offloadRender, textCost, type RenderOffload } from './render-offload';

jest.setTimeout(120_000);

const profile = getProfile('harmony-o200k');
let pool: RenderPool;
const tasks: RenderTask[] = [];
/** The pool, counting what it is asked to render. */
const counted = (inner: () => RenderPool): RenderPool => ({
  render: (task, options) => {
    tasks.push(task);
    return inner().render(task, options);
  },
  parseJson: (bytes, options) => inner().parseJson(bytes, options),
  close: async () => undefined,
});

beforeAll(() => {
  // Jest runs this file without tsx; the worker script is TypeScript.
  pool = createRenderPool({ size: 2, timeoutMs: 60_000, execArgv: ['--import', 'tsx'] });
});
afterAll(() => pool.close());
beforeEach(() => {
  tasks.length = 0;
});

const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 60 }),
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.tuple(fc.constantFrom(' ', '=', 'a', '日', '🦀'), fc.integer({ min: 1, max: 3000 })).map(([c, n]) => c.repeat(n)),
);
const entry: fc.Arbitrary<ConversationEntry> = fc.oneof(
  fc.record({
    kind: fc.constant('message' as const),
    role: fc.constantFrom('user' as const, 'assistant' as const),
    text,
  }),
  fc.record({
    kind: fc.constant('function_call_output' as const),
    name: fc.constant('read_file'),
    output: text,
    callId: fc.constant('c1'),
  }),
);
const header: fc.Arbitrary<RenderHeader> = fc.record({
  instructions: fc.option(text, { nil: undefined }),
  tools: fc.constantFrom([], [{ name: 'read_file', description: 'Reads a file' }]),
});

function job(h: RenderHeader, entries: ConversationEntry[], added: ConversationEntry[], extend?: RenderedConversation) {
  const all = AppendLog.from(entries);
  return {
    profile,
    header: h,
    body: { model: 'm' },
    entries: all,
    newEntries: added,
    extend,
    contextWindow: 1 << 20,
  } as unknown as RenderJob;
}

describe('offloadRender', () => {
  it('renders on the pool, whole or extending a turn, token for token what rendering in place gives', async () => {
    const offload: RenderOffload = { pool: counted(() => pool), minCost: 0 };
    await fc.assert(
      fc.asyncProperty(
        header,
        fc.array(entry, { maxLength: 4 }),
        header,
        fc.array(entry, { maxLength: 4 }),
        async (h1, e1, h2, e2) => {
          const ctx = { offload, cache: new EntryRenderCache(100), tenant: 't' };
          const first = job(h1, e1, e1);
          const inPlace = renderFrom(profile, h1, first);
          const pooled = renderFrom(await offloadRender(ctx, first, {}), h1, first);
          expect([...pooled.tokens.slice()]).toEqual([...inPlace.tokens.slice()]);
          const next = job(h2, [...e1, ...e2], e2, inPlace);
          const extended = renderFrom(profile, h2, next);
          const pooledNext = renderFrom(await offloadRender(ctx, next, {}), h2, next);
          expect([...pooledNext.tokens.slice()]).toEqual([...extended.tokens.slice()]);
          expect(pooledNext.entryEnds.slice()).toEqual(extended.entryEnds.slice());
        },
      ),
      { numRuns: 25 },
    );
    expect(tasks.length).toBeGreaterThan(0);
  });

  it('keeps cheap text in place and sends costly text to the pool, counting non-ASCII units eightfold', async () => {
    const offload: RenderOffload = { pool: counted(() => pool), minCost: 1000 };
    const ctx = { offload, cache: new EntryRenderCache(100), tenant: 't' };
    const msg = (t: string): ConversationEntry => ({ kind: 'message', role: 'user', text: t });
    expect(await offloadRender(ctx, job({ tools: [] }, [msg('a'.repeat(999))], []), {})).toBe(profile);
    expect(tasks).toHaveLength(0);
    await offloadRender(ctx, job({ tools: [] }, [msg('日'.repeat(125))], []), {});
    expect(tasks).toHaveLength(1);
    expect(textCost('a日', 100)).toBe(9);
    expect(textCost('a'.repeat(10_000), 100)).toBe(100);
  });

  it('counts a text as reading it unit by unit would, up to the cap', () => {
    const unitByUnit = (text: string, cap: number) => {
      let cost = 0;
      for (let i = 0; i < text.length && cost < cap; i++) cost += text.charCodeAt(i) < 0x80 ? 1 : NON_ASCII_COST;
      return cost;
    };
    const unit = fc.constantFrom('a', ' ', '\n', '\u007f', '\u0080', 'é', '日', '\ud83d', '\ude00');
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 300 }), fc.integer({ min: -2, max: 400 }), (text, cap) => {
        expect(textCost(text, cap)).toBe(unitByUnit(text, cap));
      }),
      { numRuns: 1000 },
    );
  });

  it("renders in place what this tenant's render cache holds, and never another tenant's entry", async () => {
    const offload: RenderOffload = { pool: counted(() => pool), minCost: 10 };
    const cache = new EntryRenderCache(100);
    const doc: ConversationEntry = { kind: 'message', role: 'user', text: 'a shared document '.repeat(10) };
    cache.forTenant('a').render(profile, doc);
    await offloadRender({ offload, cache, tenant: 'a' }, job({ tools: [] }, [doc], []), {});
    expect(tasks).toHaveLength(0);
    await offloadRender({ offload, cache, tenant: 'b' }, job({ tools: [] }, [doc], []), {});
    expect(tasks.map((t) => t.entries)).toEqual([[doc]]);
  });

  it('bounds pooled tokens by the budget left, as rendering in place does', async () => {
    const ctx = { offload: { pool, minCost: 0 }, cache: new EntryRenderCache(0), tenant: 't' };
    const big: ConversationEntry = { kind: 'message', role: 'user', text: 'word '.repeat(5_000) };
    const j = job({ tools: [] }, [big], [big]);
    await expect(
      offloadRender(ctx, j, { maxTokens: 100 }).then((p) => renderFrom(p, j.header, j, undefined, { maxTokens: 100 })),
    ).rejects.toBeInstanceOf(TokenBudgetExceededError);
  });
});

describe('a turn with a render pool', () => {
  function open(tenant: string, offload?: RenderOffload) {
    const { deps, backends } = fakeDeps(new FakeBackends());
    deps.renderOffload = offload;
    const events: any[] = [];
    const session = new ResponsesSession({
      deps,
      principal: { tenant, keyId: tenant },
      transport: 'websocket',
      cache: new ConnectionStateCache(new StateCacheBudget(1 << 30), 1 << 28),
      send: (e) => events.push(e),
      logger: deps.logger,
      maxQueued: 4,
    });
    const create = async (body: Record<string, unknown>) => {
      const from = events.length;
      session.receive(JSON.stringify({ type: 'response.create', model: 'fake-model', store: false, ...body }));
      await session.whenIdle();
      return events.slice(from);
    };
    return { create, backends };
  }
  const word = (n: number) => Array.from({ length: n }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join('');

  it('sends a large input to the pool and a small one not, with the prompt rendering in place gives', async () => {
    const offload = { pool: counted(() => pool), minCost: 16 * 1024 };
    const pooled = open('t', offload);
    const inPlace = open('t');
    for (const input of ['hello', word(40_000)]) {
      await pooled.create({ input });
      await inPlace.create({ input });
    }
    expect(tasks).toHaveLength(1);
    expect(pooled.backends.prompts).toEqual(inPlace.backends.prompts);
  });

  it("serves another tenant's whole small turn while a large input tokenizes on the pool", async () => {
    let rendering: 'not yet' | 'running' | 'done' = 'not yet';
    const tracked: RenderPool = {
      render: (task, options) => {
        rendering = 'running';
        return pool.render(task, options).finally(() => (rendering = 'done'));
      },
      parseJson: (bytes, options) => pool.parseJson(bytes, options),
      close: async () => undefined,
    };
    const hostile = open('hostile', { pool: tracked, minCost: 16 * 1024 });
    const neighbour = open('neighbour', { pool: tracked, minCost: 16 * 1024 });
    // CJK without spaces, within the window: ~0.35 s per MB on a thread of its own.
    const cjk = Array.from({ length: 180_000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20_000))).join('');
    const big = hostile.create({ input: cjk });
    while (rendering === 'not yet') await new Promise((r) => setImmediate(r));
    const events = await neighbour.create({ input: 'hi' });
    expect(events.at(-1).type).toBe('response.completed');
    expect(rendering).toBe('running');
    await big;
  });

  it('answers 400 render_deadline_exceeded when tokenizing overruns its budget', async () => {
    const tight = createRenderPool({ size: 1, timeoutMs: 5, execArgv: ['--import', 'tsx'] });
    try {
      const s = open('t', { pool: tight, minCost: 0 });
      const events = await s.create({ input: word(1_000_000) });
      expect(events).toEqual([
        expect.objectContaining({
          type: 'error',
          status: 400,
          error: expect.objectContaining({ code: 'render_deadline_exceeded', param: 'input' }),
        }),
      ]);
      expect(s.backends.generateCalls).toHaveLength(0);
    } finally {
      await tight.close();
    }
  });
});
