import type { inferenceV1, routerV1 } from '@fastloop/proto';
import { DomainError, ErrorCode } from '@fastloop/service-kit';
import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { openWsSession } from '../testing/ws-session';
import type { RouteDecision } from './conversation-state';
import { revalidatesInBackground } from './route-stage';
import type { TurnDeps, TurnRequest } from './turn-deps';

/**
 * A session whose router bounds reuse (`reuse_ms` 1 by default; each turn waits past it, so every
 * continuation's decision has expired) and, on each ask, places the conversation on the worker
 * `placeOn` names; it can be made to fail.
 */
function open(revalidation: 'background' | 'inline', reuseMs = 1) {
  const backends = new FakeBackends();
  const route = backends.route.bind(backends);
  let placeOn = 'w1';
  let failure: DomainError | undefined;
  backends.route = async (req: routerV1.RouteRequest) => {
    const answer = await route(req);
    if (failure) throw failure;
    return { ...answer, workerId: placeOn, workerAddress: `fake:${placeOn}`, reuseMs };
  };
  const served: string[] = [];
  const generate = backends.generate.bind(backends);
  backends.generate = (address: string, req: inferenceV1.GenerateRequest, signal?: AbortSignal) => {
    served.push(address);
    return generate(address, req, signal);
  };
  const { deps, registry } = fakeDeps(backends, true);
  deps.routeRevalidation = revalidation;
  const { create } = openWsSession(deps);
  const kept = async () => (await registry.getSingleMetric('fastloop_edge_routes_kept_total')!.get()).values[0].value;
  const revalidated = async () =>
    Object.fromEntries(
      (await registry.getSingleMetric('fastloop_edge_route_revalidations_total')!.get()).values.map((v) => [
        v.labels.result,
        v.value,
      ]),
    );
  const turn = async (body: Record<string, unknown>) => {
    await new Promise((r) => setTimeout(r, reuseMs + 5)); // past the decision's reuse window
    return (await create(body)).at(-1);
  };
  return {
    turn,
    backends,
    served,
    kept,
    revalidated,
    moveTo: (worker: string) => (placeOn = worker),
    failWith: (err: DomainError | undefined) => (failure = err),
  };
}

/** The Route call made after a turn's own work (a macrotask later) has been answered. */
const settled = () => new Promise((r) => setTimeout(r, 5));

describe('a continuation whose route expired, revalidated in the background', () => {
  it('starts on its worker at once, and the router’s move serves the next turn', async () => {
    const s = open('background');
    const first = await s.turn({ input: 'hi' });
    s.moveTo('w2');
    const asked = s.backends.routeCalls.length;
    const second = await s.turn({ input: 'more', previous_response_id: first.response.id });
    expect(second.type).toBe('response.completed');
    await settled();
    expect(s.backends.routeCalls.length).toBe(asked + 1); // it did ask, beside the turn
    expect(s.served).toEqual(['fake:w1', 'fake:w1']); // but the turn stayed where its prefix is
    expect(s.backends.generateCalls.at(-1)!.prefixLen).toBeGreaterThan(0);
    const third = await s.turn({ input: 'again', previous_response_id: second.response.id });
    expect(third.type).toBe('response.completed');
    expect(s.served.at(-1)).toBe('fake:w2'); // the router's answer, one turn later
    await settled();
    // Asked beside turns 2 (moved to w2) and 3 (stays on w2).
    expect(await s.revalidated()).toEqual({ moved: 1, same: 1 });
    // A worker that does not hold the conversation gets the whole prompt.
    expect(s.backends.generateCalls.at(-1)!.prefixLen).toBe(0);
  });

  it('keeps the worker through a router outage, counted, and the next turn asks again', async () => {
    const s = open('background');
    const first = await s.turn({ input: 'hi' });
    s.failWith(new DomainError(ErrorCode.unavailable, 'router gone', 14, true));
    const second = await s.turn({ input: 'more', previous_response_id: first.response.id });
    expect(second.type).toBe('response.completed');
    await settled();
    expect(await s.kept()).toBe(1);
    s.failWith(undefined);
    const asked = s.backends.routeCalls.length;
    await s.turn({ input: 'again', previous_response_id: second.response.id });
    await settled();
    expect(s.backends.routeCalls.length).toBe(asked + 1);
  });

  it('fails the next turn, asked before it starts, when the router refuses the conversation', async () => {
    const s = open('background');
    const first = await s.turn({ input: 'hi' });
    s.failWith(new DomainError(ErrorCode.modelNotFound, 'no such model', 5));
    const second = await s.turn({ input: 'more', previous_response_id: first.response.id });
    expect(second.type).toBe('response.completed'); // asked beside it: the refusal comes after its start
    const generated = s.backends.generateCalls.length;
    const third = await s.turn({ input: 'again', previous_response_id: second.response.id });
    expect(third).toMatchObject({ type: 'error', error: { code: 'model_not_found' } });
    expect(s.backends.generateCalls.length).toBe(generated); // asked first: nothing reached a worker
    expect(await s.kept()).toBe(0);
    expect(await s.revalidated()).toEqual({ refused: 1 });
  });
});

describe('a continuation whose route expired, revalidated inline', () => {
  it.each([
    ['EDGE_ROUTE_REVALIDATION is inline', 'inline' as const, 1],
    ['the router places every turn (reuse_ms 0)', 'background' as const, 0],
  ])('waits for the router and follows its move on the same turn when %s', async (_, revalidation, reuseMs) => {
    const s = open(revalidation, reuseMs);
    const first = await s.turn({ input: 'hi' });
    s.moveTo('w2');
    await s.turn({ input: 'more', previous_response_id: first.response.id });
    expect(s.served).toEqual(['fake:w1', 'fake:w2']);
  });
});

describe('which expired decisions are revalidated in the background', () => {
  const decision = (reuseMs?: number) => ({ reuseMs }) as RouteDecision;
  const req = (transport: TurnRequest['transport']) => ({ transport }) as TurnRequest;
  const deps = (routeRevalidation?: 'background' | 'inline') => ({ routeRevalidation }) as TurnDeps;

  it('only where a connection cache carries the answer to the next turn, for a router that let it be reused', () => {
    expect(revalidatesInBackground(deps('background'), req('websocket'), decision(1000))).toBe(true);
    expect(revalidatesInBackground(deps('background'), req('grpc'), decision(1000))).toBe(true);
    // HTTP and SSE continue from the store, which does not keep the answer.
    expect(revalidatesInBackground(deps('background'), req('http'), decision(1000))).toBe(false);
    expect(revalidatesInBackground(deps('background'), req('sse'), decision(1000))).toBe(false);
    expect(revalidatesInBackground(deps('background'), req('websocket'), decision(0))).toBe(false);
    expect(revalidatesInBackground(deps('background'), req('websocket'), decision(undefined))).toBe(false);
    expect(revalidatesInBackground(deps('inline'), req('websocket'), decision(1000))).toBe(false);
    expect(revalidatesInBackground(deps(undefined), req('websocket'), decision(1000))).toBe(false);
  });
});
