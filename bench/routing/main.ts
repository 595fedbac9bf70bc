/**
 * Routing benchmark: many concurrent multi-turn agent conversations over several simulated workers
 * with finite KV and one prefill queue each, once per placement policy (cache-aware, round-robin,
 * least-loaded, hash), each on a fresh stack of real processes; then a cache-aware run in which one
 * worker is killed. Writes bench/results/routing.{md,json}. See bench/routing/README.md.
 *
 *   npm run bench:routing            # ≈ 4 minutes
 *   npm run bench:routing -- --quick # ≈ 1.5 minutes, to bench/results/quick/
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { loadCorpus } from '../agent-loop/source-corpus';
import { renderMarkdown, summarize, summarizeKill, verdictOf, type RoutingReport } from './report';
import { runPolicy, type RunSettings } from './run-policy';
import { RoutingWorkload } from './workload';

const REPO_ROOT = resolve(__dirname, '..', '..');
const API_KEY = 'sk-bench-routing';
const POLICIES = ['cache-aware', 'round-robin', 'least-loaded', 'hash'] as const;
const progress = (line: string) => process.stderr.write(`${line}\n`);

interface Options {
  quick: boolean;
  workers: number;
  conversations: number;
  durationS: number;
  turns: number;
  prefillTps: number;
  decodeTps: number;
  kvTokens: number;
  seed: number;
  policies: string[];
  kill: boolean;
  thinkMs: number;
}

function parseOptions(argv: readonly string[]): Options {
  const o: Options = {
    quick: false,
    workers: 4,
    conversations: 40,
    durationS: 40,
    turns: 16,
    prefillTps: 12_000,
    decodeTps: 2_000,
    kvTokens: 200_000,
    seed: 7,
    policies: [...POLICIES],
    kill: true,
    thinkMs: 500,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const num = () => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v <= 0) throw new Error(`${arg} needs a positive number`);
      return v;
    };
    if (arg === '--quick') o.quick = true;
    else if (arg === '--workers') o.workers = num();
    else if (arg === '--conversations') o.conversations = num();
    else if (arg === '--duration') o.durationS = num();
    else if (arg === '--turns') o.turns = num();
    else if (arg === '--prefill-tps') o.prefillTps = num();
    else if (arg === '--decode-tps') o.decodeTps = num();
    else if (arg === '--kv-tokens') o.kvTokens = num();
    else if (arg === '--seed') o.seed = num();
    else if (arg === '--policies') o.policies = argv[++i].split(',');
    else if (arg === '--no-kill') o.kill = false;
    else if (arg === '--think-ms') o.thinkMs = Number(argv[++i]);
    else throw new Error(`unknown option ${arg}`);
  }
  if (o.quick) o.durationS = Math.min(o.durationS, 15);
  return o;
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const corpus = loadCorpus(REPO_ROOT);
  const rootWeights = [0.4, 0.25, 0.15, 0.1, 0.05, 0.05];
  const outputBytes: [number, number] = [1_500, 4_000];
  const settings: RunSettings = {
    workers: o.workers,
    conversations: o.conversations,
    durationS: o.durationS,
    turns: o.turns,
    apiKey: API_KEY,
    thinkMs: o.thinkMs,
    env: {
      FASTLOOP_API_KEYS: `${API_KEY}:bench-routing`,
      EDGE_MAX_CONNECTIONS_PER_TENANT: '100000',
      // Output moderation adds safety calls per 256 characters: not what this measures.
      EDGE_OUTPUT_MODERATION: 'false',
      SIM_SHARED_PREFILL: 'true',
      SIM_PREFILL_TOKENS_PER_SECOND: String(o.prefillTps),
      SIM_TOKENS_PER_SECOND: String(o.decodeTps),
      SIM_TTFT_MS: '10',
      SIM_JITTER: '0',
      SIM_TOOL_CALLS: String(o.turns - 1),
      SIM_ANSWER_WORDS: '30',
      INFERENCE_SESSION_CACHE_TOKENS: String(o.kvTokens),
      INFERENCE_MAX_CONCURRENCY: '4096',
    },
  };
  const loadBefore = loadavg()[0];
  const summaries = [];
  for (const policy of o.policies) {
    progress(`routing: ${policy}, ${o.conversations} conversations on ${o.workers} workers for ${o.durationS} s`);
    const workload = new RoutingWorkload({ seed: o.seed, corpus, rootWeights, outputBytes });
    const summary = summarize(await runPolicy(policy, workload, settings));
    progress(
      `  ${summary.turnsPerS.toFixed(1)} turns/s, TTFT p50 ${summary.ttftP50Ms.toFixed(0)} ms, hit rate ${(100 * summary.hitRate).toFixed(1)}%`,
    );
    summaries.push(summary);
  }
  let kill;
  if (o.kill) {
    progress(`routing: cache-aware with ${o.workers > 1 ? 'one worker killed' : 'no kill (one worker)'} halfway`);
    const workload = new RoutingWorkload({ seed: o.seed + 1, corpus, rootWeights, outputBytes });
    const run = await runPolicy('cache-aware', workload, { ...settings, killAtS: o.durationS / 2 });
    kill = summarizeKill(run, Math.min(10, o.durationS / 4));
  }
  const report: RoutingReport = {
    date: new Date().toISOString().slice(0, 10),
    machine: { cpus: cpus().length, node: process.version, loadAvgBefore: loadBefore },
    settings: {
      workers: o.workers,
      conversations: o.conversations,
      durationS: o.durationS,
      turns: o.turns,
      roots: rootWeights.length,
      rootWeights: rootWeights.map((w) => `${Math.round(w * 100)}%`).join(' / '),
      tools: 10,
      outputBytes: `${outputBytes[0]}–${outputBytes[1]}`,
      prefillTps: o.prefillTps,
      decodeTps: o.decodeTps,
      ttftMs: 10,
      kvTokens: o.kvTokens,
      thinkMs: o.thinkMs,
      seed: o.seed,
    },
    policies: summaries,
    kill,
    verdict: verdictOf(summaries),
  };
  const dir = join(REPO_ROOT, 'bench', 'results', ...(o.quick ? ['quick'] : []));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'routing.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(dir, 'routing.md'), renderMarkdown(report));
  progress(`wrote ${join(dir, 'routing.md')}`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:routing failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
