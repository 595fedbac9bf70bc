import { HttpAgent, WsAgent, type AgentSpec, type TurnRecord } from './agents';
import type { Fleet, RestartReport } from './fleet';
import { clientUsage, phaseStats, type Phase, type PhaseStats, type UsageTotals } from './turn-stats';

/** The agents of a run: WebSocket and HTTP, store true and false, each its own tenant (its own ledger rows). */
export function agentSpecs(counts: {
  wsStore: number;
  wsNoStore: number;
  httpStore: number;
  httpNoStore: number;
}): AgentSpec[] {
  const kinds: [AgentSpec['transport'], boolean, number][] = [
    ['ws', true, counts.wsStore],
    ['ws', false, counts.wsNoStore],
    ['http', true, counts.httpStore],
    ['http', false, counts.httpNoStore],
  ];
  return kinds.flatMap(([transport, store, n]) =>
    Array.from({ length: n }, (_, i) => {
      const name = `${transport}-${store ? 'store' : 'nostore'}-${i}`;
      return { name, transport, store, tenant: `fleet-${name}`, apiKey: `sk-fleet-${name}` };
    }),
  );
}

/** What a run saw. */
export interface ScenarioResult {
  readonly records: TurnRecord[];
  readonly phases: PhaseStats[];
  readonly restarts: RestartReport[];
  /** Reconnects per WebSocket agent (the SDK's, after a close by the server). */
  readonly reconnects: Record<string, number>;
  readonly failures: string[];
  /** Per tenant: what the clients saw of their completed responses, and what billing's ledger says. */
  readonly seen: Record<string, UsageTotals | undefined>;
  readonly ledger: Record<string, UsageTotals | undefined>;
}

/**
 * Runs the agents against the fleet, restarting `replicas` one after the other (each a rolling
 * restart: drain, replace, back in rotation) between steady phases, then stops the agents (each
 * finishes its turn) and reads every tenant's ledger once billing has caught up.
 */
export async function runScenario(
  f: Fleet,
  specs: readonly AgentSpec[],
  replicas: readonly string[],
  timing: { warmMs: number; settleMs: number; steadyMs: number } = { warmMs: 4_000, settleMs: 1_000, steadyMs: 1_500 },
): Promise<ScenarioResult> {
  const records: TurnRecord[] = [];
  const stop = new AbortController();
  const agents = specs.map((s) =>
    s.transport === 'ws' ? new WsAgent(s, `${f.url}/v1`) : new HttpAgent(s, `${f.url}/v1`),
  );
  const runs = agents.map((a, i) => a.run(stop.signal, (r) => records.push(r), thinker(i + 1)));
  const phases: Phase[] = [];
  const restarts: RestartReport[] = [];
  const steady = async (name: string, ms: number) => {
    const from = Date.now();
    await new Promise((r) => setTimeout(r, ms));
    phases.push({ name, from, to: Date.now() });
  };
  try {
    await steady('steady (before)', timing.warmMs);
    for (const replica of replicas) {
      const from = Date.now();
      restarts.push(await f.restart(replica));
      // Turns started just after the replacement is back still meet the reconnect and the moved state.
      await new Promise((r) => setTimeout(r, timing.settleMs));
      phases.push({ name: `restart ${replica}`, from, to: Date.now() });
      await steady(`steady (after ${replica})`, timing.steadyMs);
    }
  } finally {
    stop.abort();
    await Promise.all(runs);
    agents.forEach((a) => a.close());
  }
  const tenantOf = (agent: string) => specs.find((s) => s.name === agent)!.tenant;
  const seenMap = clientUsage(records, tenantOf);
  const seen = Object.fromEntries(specs.map((s) => [s.tenant, seenMap.get(s.tenant)]));
  return {
    records,
    phases: phases.map((p) => phaseStats(records, p)),
    restarts,
    reconnects: Object.fromEntries(
      agents.filter((a): a is WsAgent => a instanceof WsAgent).map((a) => [a.spec.name, a.reconnectCount]),
    ),
    failures: records.filter((r) => r.outcome === 'failed').map((r) => `${r.agent}: ${r.error}`),
    seen,
    ledger: await ledgerMatching(f, specs, seen),
  };
}

/** A deterministic think time per agent, 50–250 ms, as tools take time between turns. */
function thinker(seed: number): () => number {
  let x = seed * 2654435761 || 1;
  return () => {
    x = (x * 1103515245 + 12345) >>> 0;
    return 50 + (x % 200);
  };
}

/**
 * Each tenant's `GET /v1/usage` totals (through HAProxy, with its own key) once billing has applied
 * everything the clients saw, or what it had after 60 s.
 */
async function ledgerMatching(
  f: Fleet,
  specs: readonly AgentSpec[],
  seen: Record<string, UsageTotals | undefined>,
): Promise<Record<string, UsageTotals | undefined>> {
  const read = async () =>
    Object.fromEntries(
      await Promise.all(
        specs.map(async (s) => {
          const res = await fetch(`${f.url}/v1/usage`, { headers: { authorization: `Bearer ${s.apiKey}` } });
          const t = ((await res.json()) as { totals?: Record<string, number> }).totals;
          const totals =
            t && t.responses > 0
              ? {
                  responses: t.responses,
                  input_tokens: t.input_tokens,
                  cached_tokens: t.cached_tokens,
                  output_tokens: t.output_tokens,
                }
              : undefined;
          return [s.tenant, totals] as const;
        }),
      ),
    );
  const want = JSON.stringify(seen);
  const deadline = Date.now() + 60_000;
  let last = await read();
  while (JSON.stringify(last) !== want && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    last = await read();
  }
  return last;
}

/** The run as Markdown tables: per phase, and per restarted replica. */
export function renderReport(title: string, result: ScenarioResult): string {
  const ms = (v: number) => (Number.isNaN(v) ? '–' : `${Math.round(v)}`);
  return [
    '',
    `${title}: ${result.records.length} turn attempts, ${result.failures.length} failed`,
    '',
    '| phase | turns completed | failed | previous_response_not_found (resent in full) | resent before start | first output p50 / p99 (ms) |',
    '|---|---:|---:|---:|---:|---:|',
    ...result.phases.map(
      (s) =>
        `| ${s.phase} | ${s.completed} | ${s.failed} | ${s.notFound} | ${s.resent} | ${ms(s.firstOutputP50Ms)} / ${ms(s.firstOutputP99Ms)} |`,
    ),
    '',
    '| replica | drain (SIGTERM → exit, ms) | replacement ready (ms) | back in rotation (ms) | exit |',
    '|---|---:|---:|---:|---|',
    ...result.restarts.map(
      (r) =>
        `| ${r.replica} | ${r.drainMs} | ${r.readyMs} | ${r.totalMs} | ${r.exit.forced ? 'killed' : `code ${r.exit.code}`} |`,
    ),
    '',
  ].join('\n');
}
