import { DomainError, ErrorCode } from '@fastloop/service-kit';
import { ResponsesSession } from '../session/responses-session';
import { ConnectionStateCache, StateCacheBudget } from '../session/state-cache';
import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { conversationRootOf, prefixKeyOf, routeRequestOf } from './route-hints';

function open(backends = new FakeBackends()) {
  const { deps, registry } = fakeDeps(backends, true);
  const events: any[] = [];
  const session = new ResponsesSession({
    deps,
    principal: { tenant: 't', keyId: 'k' },
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
  return { create, backends, registry, session };
}

const terminal = (events: any[]) => events[events.length - 1];

describe('a worker that fails before the first token', () => {
  it.each([ErrorCode.unavailable, ErrorCode.workerOverloaded, ErrorCode.engineError, ErrorCode.internal])(
    'is replaced by another worker, invisibly (%s)',
    async (code) => {
      const s = open();
      const first = terminal(await s.create({ input: 'hi' }));
      s.backends.failNextGenerate = new DomainError(code, 'gone', 14, code !== ErrorCode.engineError);
      const events = await s.create({ input: 'more', previous_response_id: first.response.id });
      expect(events.map((e) => e.type)).not.toContain('response.failed');
      expect(terminal(events).type).toBe('response.completed');
      // The retry asked the router for any worker but the one that failed, and sent the whole prompt.
      const retry = s.backends.routeCalls.at(-1)!;
      expect(retry.excludeWorkerIds).toEqual(['w1']);
      expect(retry).toMatchObject({ sessionKey: first.response.id, sessionWorkerId: 'w1' });
      expect(s.backends.generateCalls.at(-1)).toMatchObject({ prefixLen: 0, parentSessionKey: '' });
      expect((await s.registry.getSingleMetric('fastloop_edge_worker_retries_total')!.get()).values).toEqual([
        expect.objectContaining({ labels: { code }, value: 1 }),
      ]);
      // The conversation now lives on w2: its next turn goes there with only its new tokens.
      const next = await s.create({ input: 'again', previous_response_id: terminal(events).response.id });
      expect(terminal(next).type).toBe('response.completed');
      expect(s.backends.generateCalls.at(-1)!.prefixLen).toBeGreaterThan(0);
    },
  );

  it('counts a stream that ends before its first token without a result as inference_incomplete', async () => {
    const s = open();
    const generate = s.backends.generate.bind(s.backends);
    let calls = 0;
    s.backends.generate = (address, req, signal) =>
      calls++ === 0 ? (async function* () {})() : generate(address, req, signal);
    const events = await s.create({ input: 'hi' });
    expect(terminal(events).type).toBe('response.completed');
    expect(calls).toBe(2);
    expect(s.backends.routeCalls.at(-1)!.excludeWorkerIds).toEqual(['w1']);
    expect((await s.registry.getSingleMetric('fastloop_edge_worker_retries_total')!.get()).values).toEqual([
      expect.objectContaining({ labels: { code: ErrorCode.inferenceIncomplete }, value: 1 }),
    ]);
  });

  it('is not retried once the client has gone', async () => {
    const s = open();
    const generate = s.backends.generate.bind(s.backends);
    s.backends.generate = (address, req, signal) => {
      s.session.close();
      s.backends.failNextGenerate = new DomainError(ErrorCode.unavailable, 'gone', 14, true);
      return generate(address, req, signal);
    };
    await s.create({ input: 'hi' });
    expect(s.backends.generateCalls).toHaveLength(1);
    expect(s.backends.routeCalls).toHaveLength(1);
  });

  it('is not retried when the prompt itself is at fault', async () => {
    const s = open();
    s.backends.failNextGenerate = new DomainError('invalid_prompt', 'bad token', 3);
    const events = await s.create({ input: 'hi' });
    expect(terminal(events).type).toBe('response.failed');
    expect(s.backends.routeCalls).toHaveLength(1);
  });
});

describe('route hints', () => {
  const req = (body: Record<string, unknown>, previous?: any) =>
    ({ body, principal: { tenant: 't', keyId: 'k' }, previous }) as never;

  it('names a conversation root by prompt_cache_key, else by its instructions and tools', () => {
    expect(prefixKeyOf({ prompt_cache_key: 'team-a', instructions: 'x', tools: [] })).toBe('k:team-a');
    const a = prefixKeyOf({ instructions: 'Be brief.', tools: [] });
    expect(a).toMatch(/^h:[\w-]{22}$/);
    expect(prefixKeyOf({ instructions: 'Be brief.', tools: [] })).toBe(a);
    expect(prefixKeyOf({ instructions: 'Be long.', tools: [] })).not.toBe(a);
    expect(prefixKeyOf({ tools: [] })).toBe('');
  });

  it("keeps a conversation's root on its continuations, unless they name a prompt_cache_key", () => {
    const first = { instructions: 'Be brief.', tools: [] };
    const root = conversationRootOf(req(first));
    expect(root).toBe(prefixKeyOf(first));
    const previous = { prefixKey: root, route: { workerId: 'w1' }, workerPrefixLength: 0, sampled: [] };
    // The resent (even changed) header is not digested again: the continuation is the same conversation.
    expect(conversationRootOf(req({ instructions: 'Be long.', tools: [] }, previous))).toBe(root);
    expect(routeRequestOf(req({ instructions: 'Be long.' }, previous), 'm', []).prefixKey).toBe(root);
    expect(conversationRootOf(req({ prompt_cache_key: 'team-b' }, previous))).toBe('k:team-b');
    // A state without a root (rebuilt from the store) digests the request as before.
    expect(conversationRootOf(req({ instructions: 'Be long.' }, { route: {} }))).toBe(
      prefixKeyOf({ instructions: 'Be long.' } as never),
    );
  });

  it('tells the router the session, where the connection left it, the tier and the expected output', () => {
    const previous = { route: { workerId: 'w3' }, workerPrefixLength: 120, sampled: [1, 2, 3] };
    const r = routeRequestOf(
      req({ previous_response_id: 'resp_1', service_tier: 'priority', max_output_tokens: 500 }, previous),
      'fake-model',
      ['w9'],
    );
    expect(r).toMatchObject({
      model: 'fake-model',
      tenant: 't',
      sessionKey: 'resp_1',
      sessionWorkerId: 'w3',
      sessionTokens: 123,
      serviceTier: 'priority',
      expectedOutputTokens: 500,
      excludeWorkerIds: ['w9'],
    });
    expect(r.cacheSalt).toMatch(/^[\w-]{22}$/);
  });
});
