/**
 * Lanes and steering benchmark (issue 20), against the real stack with the simulated engine:
 * 1. N sub-agents (a 2-turn tool loop each) on one WebSocket's lanes (`stream_id`) vs the same N
 *    on N WebSocket connections, side by side in one run: the edge's live heap (after a forced
 *    GC) with the agents' state held, and the p50/p95 of time to first output (response.create
 *    sent → first `response.output_item.added`);
 * 2. steering latency: `response.steer` sent → the automatic successor's first output item.
 * Writes bench/results/lanes.{json,md}. The machine's load is recorded beside the figures.
 *
 *   npx tsx bench/lanes/main.ts [--agents 16] [--rounds 3] [--steers 10]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import WebSocket from 'ws';
import { startStack, type Stack } from '@fastloop/launcher';
import { SERVICE_NODE_ARGS_ENV } from '@fastloop/service-kit';
import { forceGc } from '../load/process-stats';

const API_KEY = 'sk-bench-lanes';
const MODEL = 'fastloop-sim';
const TOOL = {
  type: 'function',
  name: 'read_file',
  description: 'Read a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

type Event = { type: string; stream_id?: string; response?: { id: string; output: any[] }; error?: unknown };

/** A socket whose events are handed to per-lane listeners. */
class Socket {
  private readonly listeners = new Map<string, (e: Event) => void>();
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const e = JSON.parse(String(data)) as Event;
      this.listeners.get(e.stream_id ?? '')?.(e);
    });
  }

  static open(url: string): Promise<Socket> {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${API_KEY}` }, perMessageDeflate: false });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new Socket(ws)));
      ws.once('error', reject);
    });
  }

  listen(lane: string, fn: (e: Event) => void): void {
    this.listeners.set(lane, fn);
  }

  send(event: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(event));
  }
}

/** One sub-agent's tool loop on `lane` of `socket`: resolves with each turn's time to first output item (ms). */
function agent(socket: Socket, lane: string | undefined, task: string): Promise<number[]> {
  const firsts: number[] = [];
  return new Promise((resolve, reject) => {
    let sentAt = 0;
    let seenFirst = false;
    const create = (body: Record<string, unknown>) => {
      sentAt = performance.now();
      seenFirst = false;
      socket.send({ type: 'response.create', model: MODEL, store: false, tools: [TOOL], stream_id: lane, ...body });
    };
    socket.listen(lane ?? '', (e) => {
      if (e.type === 'error' || e.type === 'response.failed') return reject(new Error(JSON.stringify(e)));
      if (e.type === 'response.output_item.added' && !seenFirst) {
        seenFirst = true;
        firsts.push(performance.now() - sentAt);
      }
      if (e.type !== 'response.completed') return;
      const call = e.response!.output.find((i) => i.type === 'function_call');
      if (!call) return resolve(firsts);
      create({
        previous_response_id: e.response!.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: `contents of ${task}` }],
      });
    });
    create({ input: `Summarise ${task}.` });
  });
}

interface ModeResult {
  mode: 'lanes' | 'connections';
  agents: number;
  /** Live heap growth on the edge with the agents' sockets and cached state held, bytes. */
  heapGrowthBytes: number;
  firstOutputP50Ms: number;
  firstOutputP95Ms: number;
}

async function runMode(stack: Stack, mode: ModeResult['mode'], agents: number): Promise<ModeResult> {
  const admin = stack.services.edge.ports.admin;
  const before = (await forceGc(admin)).heap.used_heap_size;
  const sockets =
    mode === 'lanes'
      ? [await Socket.open(stack.wsUrl)]
      : await Promise.all(Array.from({ length: agents }, () => Socket.open(stack.wsUrl)));
  const runs = Array.from({ length: agents }, (_, i) =>
    mode === 'lanes'
      ? agent(sockets[0], `agent-${i}`, `src/file-${i}.ts`)
      : agent(sockets[i], undefined, `src/file-${i}.ts`),
  );
  const firsts = (await Promise.all(runs)).flat();
  const held = (await forceGc(admin)).heap.used_heap_size;
  for (const s of sockets) s.ws.close(1000);
  return {
    mode,
    agents,
    heapGrowthBytes: held - before,
    firstOutputP50Ms: quantile(firsts, 0.5),
    firstOutputP95Ms: quantile(firsts, 0.95),
  };
}

/** `response.steer` sent right after `response.created` → the successor's first output item, in ms. */
async function steerLatency(stack: Stack, times: number): Promise<number[]> {
  const socket = await Socket.open(stack.wsUrl);
  const out: number[] = [];
  for (let i = 0; i < times; i++) {
    out.push(
      await new Promise<number>((resolve, reject) => {
        let steeredAt = 0;
        let created = 0;
        socket.listen('steer', (e) => {
          if (e.type === 'error' || e.type === 'response.steer.failed') return reject(new Error(JSON.stringify(e)));
          if (e.type === 'response.created' && ++created === 1) {
            steeredAt = performance.now();
            socket.send({ type: 'response.steer', previous_response_id: e.response!.id, input: 'Keep it short.' });
          }
          if (e.type === 'response.output_item.added' && created === 2) {
            created++;
            resolve(performance.now() - steeredAt);
          }
        });
        socket.send({ type: 'response.create', model: MODEL, store: false, stream_id: 'steer', input: `Story ${i}.` });
      }),
    );
    await new Promise((r) => setTimeout(r, 300)); // let the successor finish before the next round
  }
  socket.ws.close(1000);
  return out;
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
}

async function main(): Promise<void> {
  const agents = flag('agents', 16);
  const rounds = flag('rounds', 3);
  const steers = flag('steers', 10);
  const stack = await startStack({
    port: 0,
    privateRedis: true,
    logLevel: 'warn',
    env: {
      FASTLOOP_API_KEYS: `${API_KEY}:bench-lanes`,
      SIM_TOOL_CALLS: '1',
      SIM_ANSWER_WORDS: '60',
      SIM_JITTER: '0',
      EDGE_MAX_CONNECTIONS_PER_TENANT: '10000',
      [SERVICE_NODE_ARGS_ENV]: [process.env[SERVICE_NODE_ARGS_ENV], '--expose-gc'].filter(Boolean).join(' '),
    },
  });
  try {
    // Warm-up (JIT, pools, first sessions), not recorded.
    for (const mode of ['lanes', 'connections'] as const) await runMode(stack, mode, agents);
    const loadBefore = loadavg()[0];
    const results: ModeResult[] = [];
    // Alternate the modes, so the machine's load drifts over both alike.
    for (let r = 0; r < rounds; r++)
      for (const mode of ['lanes', 'connections'] as const) results.push(await runMode(stack, mode, agents));
    const steering = await steerLatency(stack, steers);
    const report = {
      agents,
      rounds,
      load1: { before: loadBefore, after: loadavg()[0] },
      modes: results,
      steerToFirstOutputMs: { p50: quantile(steering, 0.5), p95: quantile(steering, 0.95), samples: steering.length },
    };
    const dir = resolve(__dirname, '..', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'lanes.json'), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(dir, 'lanes.md'), markdown(report));
    process.stdout.write(markdown(report));
  } finally {
    await stack.stop();
  }
}

function markdown(r: {
  agents: number;
  load1: { before: number; after: number };
  modes: ModeResult[];
  steerToFirstOutputMs: { p50: number; p95: number; samples: number };
}): string {
  const rows = r.modes.map(
    (m) =>
      `| ${m.mode} | ${m.agents} | ${(m.heapGrowthBytes / 1024).toFixed(0)} KiB | ${m.firstOutputP50Ms.toFixed(1)} | ${m.firstOutputP95Ms.toFixed(1)} |`,
  );
  return [
    `# Lanes vs connections (${r.agents} sub-agents), load1 ${r.load1.before.toFixed(2)} → ${r.load1.after.toFixed(2)}`,
    '',
    '| mode | agents | edge live heap growth | first output p50 ms | p95 ms |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    `Steering: response.steer → successor's first output item p50 ${r.steerToFirstOutputMs.p50.toFixed(1)} ms, p95 ${r.steerToFirstOutputMs.p95.toFixed(1)} ms (${r.steerToFirstOutputMs.samples} samples).`,
    '',
  ].join('\n');
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
