/**
 * Several replicas of every service, proven together: 2 edges behind HAProxy, 2 safety, 2 routers,
 * 3 inference workers, billing and one Redis, while 20 agent loops run over WebSocket (the official
 * SDK's ResponsesWS) and HTTP/SSE, with store true and false. Each edge, then one worker, then one
 * safety replica is restarted the way a rolling update does it. store: true conversations lose no
 * turn; store: false WebSocket conversations are told previous_response_not_found after their edge
 * goes and recover by resending their full input; billing's ledger equals what the clients saw.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { HttpAgent, WsAgent, type AgentSpec, type TurnRecord } from './agents';
import { buildBundles, Fleet, type RestartReport } from './fleet';
import { haproxyInstalled } from './haproxy';
import { clientUsage, phaseStats, type Phase, type PhaseStats, type UsageTotals } from './turn-stats';

const repoRoot = resolve(__dirname, '../..');
const workDir = join(repoRoot, '.fastloop', 'fleet');
const missing = [
  haproxyInstalled() ? undefined : 'haproxy (Debian: apt-get install haproxy)',
  spawnSync('redis-server', ['--version']).error ? 'redis-server' : undefined,
].filter(Boolean);
if (missing.length) process.stderr.write(`fleet test skipped: ${missing.join(', ')} not installed\n`);

/** The 20 agents: WebSocket and HTTP, store true and false, each its own tenant (its own ledger rows). */
function agentSpecs(): AgentSpec[] {
  const kinds: [AgentSpec['transport'], boolean, number][] = [
    ['ws', true, 8],
    ['ws', false, 4],
    ['http', true, 4],
    ['http', false, 4],
  ];
  return kinds.flatMap(([transport, store, n]) =>
    Array.from({ length: n }, (_, i) => {
      const name = `${transport}-${store ? 'store' : 'nostore'}-${i}`;
      return { name, transport, store, tenant: `fleet-${name}`, apiKey: `sk-fleet-${name}` };
    }),
  );
}

/** A deterministic think time per agent, 50–250 ms, as tools take time between turns. */
function thinker(seed: number): () => number {
  let x = seed * 2654435761 || 1;
  return () => {
    x = (x * 1103515245 + 12345) >>> 0;
    return 50 + (x % 200);
  };
}

(missing.length ? describe.skip : describe)('a fleet on one machine, rolled while agents run', () => {
  let fleet: Fleet | undefined;
  const specs = agentSpecs();

  beforeAll(async () => {
    rmSync(workDir, { recursive: true, force: true });
    mkdirSync(workDir, { recursive: true });
    const bundles = join(workDir, 'bundles');
    buildBundles(bundles);
    fleet = await Fleet.start({
      dir: join(workDir, 'run'),
      bundles,
      apiKeys: specs.map((s) => `${s.apiKey}:${s.tenant}`).join(','),
      env: {
        SIM_TTFT_MS: '20',
        SIM_TOKENS_PER_SECOND: '2000',
        SIM_TOOL_CALLS: '2',
        SIM_ANSWER_WORDS: '20',
        // The routers check the workers every 250 ms (fleet.ts): a draining worker serves until they saw it.
        INFERENCE_DRAIN_QUIET_MS: '600',
      },
    });
  }, 300_000);

  afterAll(async () => {
    await fleet?.stop();
  }, 120_000);

  it('restarts each edge, a worker and a safety replica with 0 failed turns, and bills exactly what the clients saw', async () => {
    const f = fleet!;
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
      await steady('steady (before)', 4_000);
      for (const replica of ['edge-0', 'edge-1', 'inference-1', 'safety-0']) {
        const from = Date.now();
        restarts.push(await f.restart(replica));
        // Turns started just after the replacement is back still meet the reconnect and the moved state.
        await new Promise((r) => setTimeout(r, 1_000));
        phases.push({ name: `restart ${replica}`, from, to: Date.now() });
        await steady(`steady (after ${replica})`, 1_500);
      }
    } finally {
      stop.abort();
      await Promise.all(runs);
      agents.forEach((a) => a.close());
    }

    const stats = phases.map((p) => phaseStats(records, p));
    const tenantOf = (agent: string) => specs.find((s) => s.name === agent)!.tenant;
    const seen = clientUsage(records, tenantOf);
    const ledger = await ledgerMatching(f, specs, seen);
    const report = {
      agents: specs.length,
      turns: records.length,
      restarts,
      phases: stats,
      failures: records.filter((r) => r.outcome === 'failed').map((r) => `${r.agent}: ${r.error}`),
      reconnects: Object.fromEntries(
        agents.filter((a) => a instanceof WsAgent).map((a) => [a.spec.name, (a as WsAgent).reconnectCount]),
      ),
    };
    writeFileSync(join(workDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(renderReport(stats, restarts, records.length));

    // Every kind of agent made progress in every phase of the run.
    for (const kind of ['ws-store', 'ws-nostore', 'http-store', 'http-nostore'])
      expect([kind, records.filter((r) => r.agent.startsWith(kind) && r.outcome === 'completed').length > 0]).toEqual([
        kind,
        true,
      ]);
    // 0 failed turns, for every agent: store true continued on the other edge from Redis, store
    // false recovered from previous_response_not_found by resending its input.
    expect(report.failures).toEqual([]);
    // The drained edges' WebSockets were closed for the SDK to reconnect (1001), and store: false
    // WebSocket chains met previous_response_not_found on their new edge — the documented path.
    expect(Object.values(report.reconnects).some((n) => n > 0)).toBe(true);
    expect(records.filter((r) => r.outcome === 'not_found').every((r) => r.transport === 'ws' && !r.store)).toBe(true);
    expect(records.some((r) => r.outcome === 'not_found')).toBe(true);
    expect(records.some((r) => r.store && r.transport === 'ws' && r.afterReconnect && r.outcome === 'completed')).toBe(
      true,
    );
    // Usage exact: billing's ledger per tenant is what the clients saw.
    expect(ledger).toEqual(Object.fromEntries(specs.map((s) => [s.tenant, seen.get(s.tenant)])));
    // Every restarted replica drained and exited by itself.
    for (const r of restarts) expect([r.replica, r.exit.forced, r.exit.code]).toEqual([r.replica, false, 0]);
  }, 600_000);
});

/**
 * Each tenant's `GET /v1/usage` totals (through HAProxy, with its own key) once billing has applied
 * everything the clients saw, or what it had after 60 s.
 */
async function ledgerMatching(
  f: Fleet,
  specs: readonly AgentSpec[],
  seen: Map<string, UsageTotals>,
): Promise<Record<string, UsageTotals | undefined>> {
  const read = async () =>
    Object.fromEntries(
      await Promise.all(
        specs.map(async (s) => {
          const res = await fetch(`${f.url}/v1/usage`, { headers: { authorization: `Bearer ${s.apiKey}` } });
          const body = (await res.json()) as { totals?: Record<string, number> };
          const t = body.totals;
          return [
            s.tenant,
            t && t.responses > 0
              ? {
                  responses: t.responses,
                  input_tokens: t.input_tokens,
                  cached_tokens: t.cached_tokens,
                  output_tokens: t.output_tokens,
                }
              : undefined,
          ] as const;
        }),
      ),
    );
  const want = JSON.stringify(Object.fromEntries(specs.map((s) => [s.tenant, seen.get(s.tenant)])));
  const deadline = Date.now() + 60_000;
  let last = await read();
  while (JSON.stringify(last) !== want && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    last = await read();
  }
  return last;
}

function renderReport(stats: readonly PhaseStats[], restarts: readonly RestartReport[], turns: number): string {
  const ms = (v: number) => (Number.isNaN(v) ? '–' : `${Math.round(v)}`);
  const lines = [
    '',
    `fleet: ${turns} turn attempts`,
    '| phase | turns completed | failed | not_found (resent in full) | resent before start | first output p50 / p99 (ms) |',
    '|---|---:|---:|---:|---:|---:|',
    ...stats.map(
      (s) =>
        `| ${s.phase} | ${s.completed} | ${s.failed} | ${s.notFound} | ${s.resent} | ${ms(s.firstOutputP50Ms)} / ${ms(s.firstOutputP99Ms)} |`,
    ),
    '',
    '| replica | drain (SIGTERM → exit, ms) | replacement ready (ms) | back in rotation (ms) | exit |',
    '|---|---:|---:|---:|---|',
    ...restarts.map(
      (r) =>
        `| ${r.replica} | ${r.drainMs} | ${r.readyMs} | ${r.totalMs} | ${r.exit.forced ? 'killed' : `code ${r.exit.code}`} |`,
    ),
    '',
  ];
  return lines.join('\n');
}
