import { validateRequest, type ResponseStreamEvent } from '@fastloop/protocol';
import type { billingV1 } from '@fastloop/proto';
import type { ConversationState } from './conversation-state';
import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { runTurn } from './run-turn';
import type { TurnDeps, TurnRequest } from './turn-deps';

function turn(
  deps: TurnDeps,
  body: Record<string, unknown>,
  tenant = 't1',
  signal = new AbortController().signal,
): TurnRequest {
  return {
    body: validateRequest({ model: 'fake-model', ...body }),
    principal: { tenant, keyId: 'k' },
    transport: 'http',
    generate: true,
    signal,
    validateMs: 0,
    loadMs: 0,
    logger: deps.logger,
  };
}

async function settled(): Promise<void> {
  // Post-terminal work runs on setImmediate.
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
}

describe('runTurn billing and post-terminal work', () => {
  it('bills what was prefilled and generated when the client disconnects before the end', async () => {
    const { deps, usage, backends } = fakeDeps();
    backends.script = () => ({ kind: 'message', role: 'assistant', text: 'word '.repeat(60) });
    const client = new AbortController();
    let deltas = 0;
    const emit = (e: ResponseStreamEvent) => {
      if (e.type === 'response.output_text.delta' && ++deltas === 5) client.abort();
    };
    const outcome = await runTurn(
      deps,
      turn(deps, { input: 'tell me a story', store: false }, 't1', client.signal),
      emit,
    );
    expect(outcome.response.status).toBe('failed');
    await settled();
    const record = usage[0] as billingV1.UsageRecord;
    const prompt = backends.prompts[0].length;
    expect(record).toMatchObject({ status: 'failed', inputTokens: prompt, cachedTokens: 0 });
    // Every token the edge received is billed (more than zero, fewer than the whole answer).
    expect(record.outputTokens).toBeGreaterThanOrEqual(5);
    expect(record.outputTokens).toBeLessThan(60);
  });

  it('still bills and stores a response whose continuation state cannot be built', async () => {
    const { deps, usage } = fakeDeps();
    const saved: ConversationState[] = [];
    deps.store = { save: (state) => saved.push(state) };
    const req = turn(deps, { input: [{ type: 'message', role: 'user', content: 'hi' }] });
    // An input item whose measurement throws (as a 5,000-deep item did in JSON.stringify).
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    (req.body.input as unknown as Record<string, unknown>[])[0].extra = cyclic;
    const outcome = await runTurn(deps, req, () => undefined);
    expect(outcome.response.status).toBe('completed');
    expect(outcome.state).toBeUndefined(); // nothing to continue from in the connection cache
    await settled();
    expect(usage).toHaveLength(1);
    expect(saved).toHaveLength(1);
    expect(saved[0].response.id).toBe(outcome.response.id);
    expect(saved[0].items.length).toBe(1 + outcome.response.output.length);
  });

  it('sends a tenant-derived cache salt, and makes the worker forget a prompt safety blocked mid-call', async () => {
    const backends = new FakeBackends();
    const { deps } = fakeDeps(backends, true);
    await runTurn(deps, turn(deps, { input: 'hello', store: false }, 'tenant-a'), () => undefined);
    await runTurn(deps, turn(deps, { input: 'hello', store: false }, 'tenant-b'), () => undefined);
    const [a, b] = backends.generateCalls.map((c) => c.cacheSalt);
    expect(a).not.toBe('');
    expect(a).not.toBe(b);
    expect(a).not.toContain('tenant-a');
    await expect(
      runTurn(deps, turn(deps, { input: 'BLOCK-ME please', store: false }, 'tenant-a'), () => undefined),
    ).rejects.toMatchObject({ code: 'invalid_prompt' });
    expect(backends.forgotten).toEqual([{ sessionKey: backends.generateCalls[2].sessionKey, cacheSalt: a }]);
  });
});
