import { loadavg } from 'node:os';
import { startStack, type Stack } from '@fastloop/launcher';
import { createRandom } from '@fastloop/service-kit';
import { WsTurnClient } from '../agent-loop/clients/ws-client';
import { Conversation } from '../agent-loop/conversation';
import type { RoutingWorkload } from './workload';

/** One completed (or failed) turn as the client saw it. */
export interface TurnRecord {
  /** ms since the run's loops started, when the turn ended. */
  endMs: number;
  ok: boolean;
  /** Client time to the first output item, ms (NaN for a failed turn). */
  ttftMs: number;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
}

/** One worker's totals from its own /metrics. */
export interface WorkerTotals {
  id: string;
  requests: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  /** Mean of its in-flight calls as the router saw them, sampled every 250 ms. */
  meanInFlight: number;
}

/** What one policy's run produced. */
export interface PolicyRunData {
  policy: string;
  durationS: number;
  turns: TurnRecord[];
  errorKinds: Record<string, number>;
  workers: WorkerTotals[];
  /** router_placements_total by reason. */
  placements: Record<string, number>;
  sessionMoves: number;
  /** fastloop_edge_worker_retries_total: turns re-sent to another worker before their first token. */
  retries: number;
  /** 1-minute load average of the machine at the start and end of the run. */
  loadAvg: [number, number];
  /** Set when a worker was killed during the run. */
  kill?: { atMs: number; worker: string };
}

/** Settings of one run. */
export interface RunSettings {
  workers: number;
  conversations: number;
  durationS: number;
  /** Turns per conversation at most (tool calls, then an answer). */
  turns: number;
  env: Record<string, string>;
  apiKey: string;
  /** Kill the last worker (SIGKILL) this many seconds into the run. */
  killAtS?: number;
  /** The agent's own time between turns (running the tool), ms: each turn draws 0.5–1.5× this. */
  thinkMs: number;
}

const progress = (line: string) => process.stderr.write(`${line}\n`);

/** Runs the workload's conversations against a fresh stack whose router uses `policy`. */
export async function runPolicy(
  policy: string,
  workload: RoutingWorkload,
  settings: RunSettings,
): Promise<PolicyRunData> {
  const stack = await startStack({
    port: 0,
    privateRedis: true,
    logLevel: 'warn',
    workers: settings.workers,
    env: { ...settings.env, ROUTER_POLICY: policy },
  });
  try {
    const crash = stack.crashed.then((c): never => {
      throw new Error(`${c.service} exited during the routing benchmark\n${stack.tail(c.service, 40)}`);
    });
    crash.catch(() => undefined);
    return await Promise.race([drive(stack, policy, workload, settings), crash]);
  } finally {
    await stack.stop();
  }
}

async function drive(
  stack: Stack,
  policy: string,
  workload: RoutingWorkload,
  settings: RunSettings,
): Promise<PolicyRunData> {
  const loadStart = loadavg()[0];
  const turns: TurnRecord[] = [];
  const errorKinds: Record<string, number> = {};
  const inFlight = new InFlightSampler(stack);
  const t0 = performance.now();
  const deadline = t0 + settings.durationS * 1000;
  const now = () => performance.now() - t0;
  let kill: PolicyRunData['kill'];
  let killedTotals: WorkerTotals | undefined;
  const killer =
    settings.killAtS === undefined
      ? undefined
      : (async () => {
          await sleep(settings.killAtS! * 1000);
          const victim = stack.workers[stack.workers.length - 1];
          killedTotals = await workerTotals(victim.id, victim.ports.admin);
          kill = { atMs: now(), worker: victim.id };
          progress(`  killing ${victim.id} (SIGKILL) at ${(kill.atMs / 1000).toFixed(1)} s`);
          await victim.stop('SIGKILL');
        })();
  inFlight.start();
  // Deterministic per run, so every policy sees the same agent pace.
  const random = createRandom(settings.conversations * 7919 + settings.durationS);
  const loop = async (id: number) => {
    await sleep((1000 * id) / settings.conversations);
    while (performance.now() < deadline) {
      const { workload: w, promptCacheKey } = workload.conversation();
      const conversation = new Conversation('ws', w);
      let client: WsTurnClient | undefined;
      try {
        client = await WsTurnClient.open(stack.wsUrl, settings.apiKey);
        for (let turn = 1; turn <= settings.turns && !conversation.done && performance.now() < deadline; turn++) {
          const result = await client.send({ ...conversation.nextBody(), prompt_cache_key: promptCacheKey });
          conversation.accept(result.response, turn);
          if (settings.thinkMs > 0) await sleep(settings.thinkMs * (0.5 + random()));
          const usage = result.response.usage;
          turns.push({
            endMs: now(),
            ok: true,
            ttftMs: result.firstOutputMs,
            inputTokens: usage.input_tokens,
            cachedTokens: usage.input_tokens_details?.cached_tokens ?? 0,
            outputTokens: usage.output_tokens,
          });
        }
      } catch (err) {
        turns.push({ endMs: now(), ok: false, ttftMs: NaN, inputTokens: 0, cachedTokens: 0, outputTokens: 0 });
        const kind = (err instanceof Error ? err.message : String(err)).slice(0, 100).replace(/\d+/g, 'N');
        errorKinds[kind] = (errorKinds[kind] ?? 0) + 1;
      } finally {
        await client?.close();
      }
    }
  };
  await Promise.all(Array.from({ length: settings.conversations }, (_, i) => loop(i)));
  const durationS = (performance.now() - t0) / 1000;
  await killer;
  inFlight.stop();
  const workers: WorkerTotals[] = [];
  for (const w of stack.workers) {
    const totals =
      kill?.worker === w.id ? killedTotals! : await workerTotals(w.id, w.ports.admin).catch(() => emptyTotals(w.id));
    workers.push({ ...totals, meanInFlight: inFlight.mean(w.id) });
  }
  const routerText = await metricsText(stack.services.router.ports.admin);
  const edgeText = await metricsText(stack.services.edge.ports.admin);
  const placements: Record<string, number> = {};
  for (const m of routerText.matchAll(/^router_placements_total\{[^}]*reason="([^"]+)"[^}]*\}\s+(\S+)/gm))
    placements[m[1]] = (placements[m[1]] ?? 0) + Number(m[2]);
  return {
    policy,
    durationS,
    turns,
    errorKinds,
    workers,
    placements,
    sessionMoves: sumMetric(routerText, 'router_session_moves_total'),
    retries: sumMetric(edgeText, 'fastloop_edge_worker_retries_total'),
    loadAvg: [loadStart, loadavg()[0]],
    kill,
  };
}

/** Samples the router's view of every worker's in-flight calls (router_worker_load{kind="in_flight"}). */
class InFlightSampler {
  private readonly sums = new Map<string, number>();
  private samples = 0;
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(private readonly stack: Stack) {}

  start(): void {
    this.timer = setInterval(() => void this.sample(), 250);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  mean(workerId: string): number {
    return this.samples === 0 ? 0 : (this.sums.get(workerId) ?? 0) / this.samples;
  }

  private async sample(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const text = await metricsText(this.stack.services.router.ports.admin);
      this.samples++;
      for (const m of text.matchAll(/^router_worker_load\{([^}]*)\}\s+(\S+)/gm)) {
        if (!m[1].includes('kind="in_flight"')) continue;
        const worker = /worker="([^"]+)"/.exec(m[1])?.[1];
        if (worker) this.sums.set(worker, (this.sums.get(worker) ?? 0) + Number(m[2]));
      }
    } catch {
      // a missed sample only thins the average
    } finally {
      this.busy = false;
    }
  }
}

async function workerTotals(id: string, adminPort: number | undefined): Promise<WorkerTotals> {
  const text = await metricsText(adminPort);
  return {
    id,
    requests: sumMetric(text, 'inference_requests_total'),
    promptTokens: sumMetric(text, 'inference_prompt_tokens_total'),
    cachedTokens: sumMetric(text, 'inference_cached_tokens_total'),
    completionTokens: sumMetric(text, 'inference_completion_tokens_total'),
    meanInFlight: 0,
  };
}

function emptyTotals(id: string): WorkerTotals {
  return { id, requests: 0, promptTokens: 0, cachedTokens: 0, completionTokens: 0, meanInFlight: 0 };
}

async function metricsText(port: number | undefined): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  return res.text();
}

/** The sum of every series of a counter or gauge on a Prometheus page. */
export function sumMetric(text: string, name: string): number {
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})?\\s+(\\S+)`, 'gm'))) sum += Number(m[1]);
  return sum;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
