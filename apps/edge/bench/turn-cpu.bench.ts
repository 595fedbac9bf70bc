/**
 * What one turn costs the edge's own code: a WebSocket session (queue, cache, the whole turn
 * pipeline) against in-process fake backends, 20 conversations of 30 turns (a ~3 KB tool output
 * each), after 3 unrecorded ones. Prints the median per-turn CPU time of this process and wall
 * time. `STATELESS=1` resends the whole history every turn instead of chaining by id. Compare two
 * checkouts by running it from each, alternating: CPU time moves far less than wall time on a
 * shared machine.
 *
 *   npx tsx apps/edge/bench/turn-cpu.bench.ts
 *
 * Measured (issue 19, 2 shared cores at load ~14, 8 alternating runs each): chained turns ≈ 0.93 ms
 * of CPU before and after the turn became a pipeline of stages; stateless turns ≈ 1.96 vs 1.98 ms.
 */
import { randomBytes } from 'node:crypto';
import { fakeDeps, FakeBackends } from '../src/testing/fake-deps';
import { ResponsesSession } from '../src/session/responses-session';
import { ConnectionStateCache, StateCacheBudget } from '../src/session/state-cache';

const tools = [
  {
    type: 'function',
    name: 'read_file',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
];
const LINE = 'const value = compute(input, options); if (value > limit) return fallback; // note\n';
const stateless = process.env.STATELESS === '1';

/** One conversation of `turns` turns; pushes each turn's CPU and wall milliseconds. */
async function conversation(turns: number, cpu: number[], wall: number[]): Promise<void> {
  const { deps } = fakeDeps(new FakeBackends(), true);
  const events: { type: string; response?: { id: string; output: { call_id?: string }[] } }[] = [];
  const session = new ResponsesSession({
    deps,
    principal: { tenant: 't', keyId: 'k' },
    transport: 'websocket',
    cache: new ConnectionStateCache(new StateCacheBudget(1 << 30), 1 << 28),
    send: (e) => events.push(e as (typeof events)[number]),
    logger: deps.logger,
    maxQueued: 4,
  });
  const nonce = randomBytes(4).toString('hex');
  const history: unknown[] = [];
  let prev: { id: string; output: { call_id?: string }[] } | undefined;
  for (let t = 0; t < turns; t++) {
    const input = prev
      ? [{ type: 'function_call_output', call_id: prev.output[0].call_id, output: `${nonce}\n${LINE.repeat(40)}` }]
      : [{ type: 'message', role: 'user', content: `task ${nonce}` }];
    if (stateless) history.push(...(prev ? prev.output : []), ...input);
    const chain = prev && !stateless ? { previous_response_id: prev.id } : {};
    const instructions = 'Be brief. '.repeat(200);
    const body = { type: 'response.create', model: 'fake-model', store: false, tools, instructions, ...chain };
    const from = events.length;
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    session.receive(JSON.stringify({ ...body, input: stateless ? history : input }));
    await session.whenIdle();
    wall.push(performance.now() - w0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    prev = events.slice(from).at(-1)?.response;
  }
  session.close();
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
  for (let i = 0; i < 3; i++) await conversation(30, [], []);
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < 20; i++) await conversation(30, cpu, wall);
  process.stdout.write(
    `${JSON.stringify({ stateless, turns: cpu.length, cpuMedianMs: median(cpu), wallMedianMs: median(wall) })}\n`,
  );
}

void main();
