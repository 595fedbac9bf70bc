/**
 * Several inference workers behind the router, as real processes (`workers: 4`): conversations stay
 * on their worker, new ones spread, a second router replica agrees with the first, and a worker
 * that dies before a turn's first token, dies after it, or drains costs the client what the issue
 * says it may: nothing, one `response.failed`, nothing.
 *
 * The tests share one stack and run in order: each failure test takes one worker away.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Stack } from '@fastloop/launcher';
import { routerV1 } from '@fastloop/proto';
import { callUnary, createGrpcClient, getFreePort, startNodeService, type OwnedProcess } from '@fastloop/service-kit';
import { useStack, WsConversation } from './clients';
import { MetricsScrape } from './metrics';
import { startTestStack } from './stack-fixture';
import { serviceEntry } from './service-entries';

const TOKEN = 'e2e-routing-internal-token';
const TENANT = 'e2e-routing';
const KEY = 'sk-e2e-routing';

let stack: Stack;

/** inference_requests_total of every worker, by id. */
async function requestsByWorker(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const w of stack.workers) {
    try {
      const text = await (await fetch(`http://127.0.0.1:${w.ports.admin}/metrics`)).text();
      let sum = 0;
      for (const m of text.matchAll(/^inference_requests_total\{[^}]*\} (\d+)$/gm)) sum += Number(m[1]);
      out.set(w.id, sum);
    } catch {
      out.set(w.id, NaN); // a worker that is gone
    }
  }
  return out;
}

/** The workers whose request count grew between two snapshots. */
function grew(before: Map<string, number>, after: Map<string, number>): string[] {
  return [...after].filter(([id, n]) => n > (before.get(id) ?? 0)).map(([id]) => id);
}

const terminal = (events: { type: string; [k: string]: any }[]) => events[events.length - 1];
const edgeRetries = async () => (await MetricsScrape.of(stack)).value('fastloop_edge_worker_retries_total');

/** A long input: thousands of tokens the worker must prefill (SIM_PREFILL_TOKENS_PER_SECOND). */
const longInput = (tag: string, words: number) =>
  `${tag} ` + Array.from({ length: words }, (_, i) => `word${i % 97} item${i}`).join(' ');

describe('routing over several workers', () => {
  beforeAll(async () => {
    stack = await startTestStack({
      FASTLOOP_WORKERS: '4',
      FASTLOOP_API_KEYS: `${KEY}:${TENANT}`,
      FASTLOOP_INTERNAL_TOKEN: TOKEN,
      // Continuations keep their worker until it fails: the edge's own failover is what is tested.
      ROUTER_REUSE_MS: '600000',
      // One prefill queue per worker at 4,000 tokens/s and 40 tokens/s of decode: a long input
      // takes seconds before its first token, an answer about a second after it, so a test can
      // kill a worker in either phase.
      SIM_SHARED_PREFILL: 'true',
      SIM_PREFILL_TOKENS_PER_SECOND: '4000',
      SIM_TOKENS_PER_SECOND: '40',
      SIM_ANSWER_WORDS: '20',
      EDGE_OUTPUT_MODERATION: 'false',
    });
    useStack(stack);
  }, 300_000);
  afterAll(async () => {
    useStack(undefined);
    if (stack) process.stderr.write(`e2e stack logs: ${stack.logDir}\n`);
    await stack?.stop();
  }, 60_000);

  const conversation = () => new WsConversation();

  it('starts four workers behind one router and keeps a conversation on one of them', async () => {
    expect(stack.workers.map((w) => w.id)).toEqual(['sim-0', 'sim-1', 'sim-2', 'sim-3']);
    const ws = conversation();
    try {
      const before = await requestsByWorker();
      let previous: string | undefined;
      let lastInput = 0;
      for (let turn = 0; turn < 4; turn++) {
        const events = await ws.create({
          model: 'fastloop-sim',
          instructions: 'You answer briefly.',
          input: `question ${turn}`,
          previous_response_id: previous,
          store: false,
        });
        const done = terminal(events);
        expect(done.type).toBe('response.completed');
        // The worker kept the previous prompt and answer: only the new turn is prefilled.
        if (turn > 0) expect(done.response.usage.input_tokens_details.cached_tokens).toBeGreaterThan(lastInput);
        lastInput = done.response.usage.input_tokens;
        previous = done.response.id;
      }
      const served = grew(before, await requestsByWorker());
      expect(served).toHaveLength(1);
    } finally {
      ws.close();
    }
  }, 120_000);

  it('spreads conversations of different roots over the workers', async () => {
    const before = await requestsByWorker();
    for (let i = 0; i < 8; i++) {
      const ws = conversation();
      try {
        const events = await ws.create({
          model: 'fastloop-sim',
          input: 'hi',
          prompt_cache_key: `team-${i}`,
          store: false,
        });
        expect(terminal(events).type).toBe('response.completed');
      } finally {
        ws.close();
      }
    }
    expect(grew(before, await requestsByWorker()).length).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it('lets a second router replica, fed by the same workers, place every request as the first does', async () => {
    // Sessions on several workers first, through the edge (router A).
    const sessions: string[] = [];
    for (let i = 0; i < 6; i++) {
      const ws = conversation();
      try {
        const events = await ws.create({
          model: 'fastloop-sim',
          input: 'hello',
          prompt_cache_key: `replica-${i}`,
          store: false,
        });
        sessions.push(terminal(events).response.id);
      } finally {
        ws.close();
      }
    }
    let replica: OwnedProcess | undefined;
    const clients: routerV1.RouterServiceClient[] = [];
    try {
      const [grpcPort, adminPort] = [await getFreePort(), await getFreePort()];
      replica = await startNodeService({
        name: 'router-b',
        entry: serviceEntry('router'),
        cwd: join(__dirname, '../..'),
        env: {
          ...process.env,
          GRPC_PORT: String(grpcPort),
          ADMIN_PORT: String(adminPort),
          LOG_LEVEL: 'warn',
          FASTLOOP_INTERNAL_TOKEN: TOKEN,
          INFERENCE_WORKERS: stack.workers.map((w) => `${w.id}=127.0.0.1:${w.ports.grpc}`).join(','),
        },
        logFile: join(stack.logDir, 'router-b.log'),
        readyUrl: `http://127.0.0.1:${adminPort}/readyz`,
      });
      const a = createGrpcClient(
        routerV1.RouterServiceClient,
        `127.0.0.1:${stack.services.router.ports.grpc}`,
        {},
        TOKEN,
      );
      const b = createGrpcClient(routerV1.RouterServiceClient, `127.0.0.1:${grpcPort}`, {}, TOKEN);
      clients.push(a, b);
      const salt = createHash('sha256').update(`fastloop-cache-salt\u0000${TENANT}`).digest('base64url').slice(0, 22);
      const requests: routerV1.RouteRequest[] = [
        ...sessions.map((sessionKey) => ({
          model: 'fastloop-sim',
          tenant: TENANT,
          affinityKey: '',
          cacheSalt: salt,
          sessionKey,
          excludeWorkerIds: [],
        })),
        ...Array.from({ length: 12 }, (_, i) => ({
          model: 'fastloop-sim',
          tenant: TENANT,
          affinityKey: '',
          cacheSalt: salt,
          prefixKey: `k:replica-${i % 8}`,
          excludeWorkerIds: [],
        })),
      ];
      const route = (client: routerV1.RouterServiceClient, r: routerV1.RouteRequest) =>
        callUnary(client.route, client, r, { deadlineMs: 5_000 }).then((res) => res.workerId);
      // B learns the workers' holdings from their reports; once it has them, the two agree on every
      // request (asked one at a time, apart, so neither has a decision of its own pending).
      const ask = async (client: routerV1.RouterServiceClient) => {
        const out: string[] = [];
        for (const r of requests) {
          out.push(await route(client, r));
          await new Promise((resolve) => setTimeout(resolve, 550)); // past PendingLoad's 500 ms
        }
        return out;
      };
      const deadline = Date.now() + 60_000;
      let fromA: string[] = [];
      let fromB: string[] = [];
      for (;;) {
        fromA = await ask(a);
        fromB = await ask(b);
        if (fromA.join() === fromB.join() || Date.now() > deadline) break;
      }
      expect(fromB).toEqual(fromA);
      // The sessions stay where the edge's conversations left them.
      expect(new Set(fromA.slice(0, sessions.length)).size).toBeGreaterThanOrEqual(2);
    } finally {
      for (const c of clients) c.close();
      await replica?.stop(10_000);
    }
  }, 240_000);

  it('re-sends a turn whose worker dies before the first token to another worker, invisibly', async () => {
    const ws = conversation();
    try {
      const before = await requestsByWorker();
      const first = terminal(await ws.create({ model: 'fastloop-sim', input: 'short start', store: false }));
      const [home] = grew(before, await requestsByWorker());
      const retriesBefore = await edgeRetries();
      // ~8,000 new tokens: about two seconds of prefill before the first token.
      ws.ws.send({
        type: 'response.create',
        model: 'fastloop-sim',
        input: longInput('before-first-token', 2_000),
        previous_response_id: first.response.id,
        store: false,
      } as never);
      await new Promise((r) => setTimeout(r, 500));
      const exit = await stack.workers.find((w) => w.id === home)!.stop('SIGKILL');
      expect(exit.signal).toBe('SIGKILL');
      const events = await ws.collect();
      expect(events.map((e) => e.type)).not.toContain('response.failed');
      const done = terminal(events);
      expect(done.type).toBe('response.completed');
      expect(await edgeRetries()).toBe(retriesBefore + 1);
      // The next turn stays on the worker that took it over, its prefix cached there.
      const next = terminal(
        await ws.create({
          model: 'fastloop-sim',
          input: 'and then?',
          previous_response_id: done.response.id,
          store: false,
        }),
      );
      expect(next.type).toBe('response.completed');
      expect(next.response.usage.input_tokens_details.cached_tokens).toBeGreaterThan(done.response.usage.input_tokens);
    } finally {
      ws.close();
    }
  }, 120_000);

  it('fails a turn whose worker dies after its first token, and continues the conversation elsewhere', async () => {
    const ws = conversation();
    try {
      const before = await requestsByWorker();
      // Stored: a continuation that fails evicts its parent from the connection's cache (PROTOCOL.md),
      // so the agent's retry below reloads it from the response store.
      const first = terminal(
        await ws.create({ model: 'fastloop-sim', input: longInput('after-first-token', 300), store: true }),
      );
      expect(first.type).toBe('response.completed');
      const [home] = grew(before, await requestsByWorker());
      ws.ws.send({
        type: 'response.create',
        model: 'fastloop-sim',
        input: 'tell me more',
        previous_response_id: first.response.id,
        store: false,
      } as never);
      // The answer streams at 40 tokens/s: kill the worker once its first delta is out.
      const events: { type: string; [k: string]: any }[] = [];
      for (;;) {
        const e = await ws.next();
        events.push(e);
        if (e.type === 'response.output_text.delta') break;
      }
      await stack.workers.find((w) => w.id === home)!.stop('SIGKILL');
      events.push(...(await ws.collect()));
      const failed = terminal(events);
      expect(failed.type).toBe('response.failed');
      expect(failed.response.error.code).toBe('inference_unavailable');
      // The agent goes on from its last completed response (from the store: its state names the dead
      // worker, so the edge asks the router, which places it elsewhere): another worker prefills it.
      const again = terminal(
        await ws.create({
          model: 'fastloop-sim',
          input: 'tell me more',
          previous_response_id: first.response.id,
          store: false,
        }),
      );
      expect(again.type).toBe('response.completed');
      const usage = again.response.usage;
      expect(usage.input_tokens_details.cached_tokens).toBeLessThan(usage.input_tokens / 2);
    } finally {
      ws.close();
    }
  }, 120_000);

  it('lets a draining worker finish its turn, take no new conversation, and hand its sessions over invisibly', async () => {
    const ws = conversation();
    const others: WsConversation[] = [];
    try {
      const before = await requestsByWorker();
      const first = terminal(await ws.create({ model: 'fastloop-sim', input: 'drain test', store: false }));
      const [home] = grew(before, await requestsByWorker());
      const draining = stack.workers.find((w) => w.id === home)!;
      ws.ws.send({
        type: 'response.create',
        model: 'fastloop-sim',
        input: 'a long answer please',
        previous_response_id: first.response.id,
        store: false,
      } as never);
      const events: { type: string; [k: string]: any }[] = [];
      for (;;) {
        const e = await ws.next();
        events.push(e);
        if (e.type === 'response.output_text.delta') break;
      }
      const retriesBefore = await edgeRetries();
      const stopped = draining.stop('SIGTERM');
      // New conversations while it drains: once the router has seen its NOT_SERVING (pushed on the
      // health watch), none is sent to it (no retry needed), and all complete.
      const deadline = Date.now() + 30_000;
      while ((await MetricsScrape.of(stack, 'router')).value('router_worker_healthy', { worker: home }) !== 0) {
        if (Date.now() > deadline) throw new Error(`the router never saw ${home} stop serving`);
        await new Promise((r) => setTimeout(r, 20));
      }
      for (let i = 0; i < 3; i++) {
        const c = conversation();
        others.push(c);
        const done = terminal(
          await c.create({ model: 'fastloop-sim', input: 'hi', prompt_cache_key: `drain-${i}`, store: false }),
        );
        expect(done.type).toBe('response.completed');
      }
      expect(await edgeRetries()).toBe(retriesBefore);
      // Its own turn finishes.
      events.push(...(await ws.collect()));
      const done = terminal(events);
      expect(done.type).toBe('response.completed');
      const exit = await stopped;
      expect(exit).toMatchObject({ code: 0, forced: false });
      // The conversation's next turn goes to another worker without the client noticing.
      const next = terminal(
        await ws.create({ model: 'fastloop-sim', input: 'next', previous_response_id: done.response.id, store: false }),
      );
      expect(next.type).toBe('response.completed');
    } finally {
      ws.close();
      for (const c of others) c.close();
    }
  }, 120_000);
});
