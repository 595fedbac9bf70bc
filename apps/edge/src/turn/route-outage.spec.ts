import type { routerV1 } from '@fastloop/proto';
import { DomainError, ErrorCode } from '@fastloop/service-kit';
import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { openWsSession } from '../testing/ws-session';

/** A session whose router bounds reuse (`reuse_ms` 0: every continuation asks again) and can be made to fail. */
function open() {
  const backends = new FakeBackends();
  const route = backends.route.bind(backends);
  let failure: DomainError | undefined;
  const deadlines: (number | undefined)[] = [];
  backends.route = async (req: routerV1.RouteRequest, _signal?: AbortSignal, deadlineMs?: number) => {
    deadlines.push(deadlineMs);
    const answer = await route(req);
    if (failure) throw failure;
    return { ...answer, reuseMs: 0 };
  };
  const { deps, registry } = fakeDeps(backends, true);
  deps.routerReaskTimeoutMs = 250;
  const { create } = openWsSession(deps);
  const kept = async () => (await registry.getSingleMetric('fastloop_edge_routes_kept_total')!.get()).values[0].value;
  return { create, backends, kept, deadlines, failWith: (err: DomainError | undefined) => (failure = err) };
}

const terminal = (events: any[]) => events[events.length - 1];

describe('a continuation whose route expired while the router cannot answer', () => {
  it('stays on its worker with only its new tokens, and is counted', async () => {
    const s = open();
    const first = terminal(await s.create({ input: 'hi' }));
    s.failWith(new DomainError(ErrorCode.unavailable, 'router gone', 14, true));
    const routed = s.backends.routeCalls.length;
    const events = await s.create({ input: 'more', previous_response_id: first.response.id });
    expect(terminal(events).type).toBe('response.completed');
    expect(s.backends.routeCalls.length).toBe(routed + 1); // it did ask
    expect(s.backends.generateCalls.at(-1)!.prefixLen).toBeGreaterThan(0);
    expect(await s.kept()).toBe(1);
    // The next turn asks again, and follows the router once it answers.
    s.failWith(undefined);
    const next = await s.create({ input: 'again', previous_response_id: terminal(events).response.id });
    expect(terminal(next).type).toBe('response.completed');
    expect(s.backends.routeCalls.length).toBe(routed + 2);
    expect(await s.kept()).toBe(1);
  });

  it('asks within ROUTER_REASK_TIMEOUT_MS, where a new conversation waits ROUTER_TIMEOUT_MS', async () => {
    const s = open();
    const first = terminal(await s.create({ input: 'hi' }));
    await s.create({ input: 'more', previous_response_id: first.response.id });
    // The first turn had nothing to keep: the client's own deadline (ROUTER_TIMEOUT_MS).
    expect(s.deadlines).toEqual([undefined, 250]);
  });

  it('fails when the router answers with an error of its own, or when there is no route to keep', async () => {
    const s = open();
    const first = terminal(await s.create({ input: 'hi' }));
    s.failWith(new DomainError(ErrorCode.modelNotFound, 'no such model', 5));
    const gone = await s.create({ input: 'more', previous_response_id: first.response.id });
    expect(terminal(gone)).toMatchObject({ type: 'error', error: { code: 'model_not_found' } });
    s.failWith(new DomainError(ErrorCode.unavailable, 'router gone', 14, true));
    const fresh = await s.create({ input: 'a new conversation' });
    expect(terminal(fresh)).toMatchObject({ type: 'error', error: { code: 'router_unavailable' } });
    expect(await s.kept()).toBe(0);
  });
});
