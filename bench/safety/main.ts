// Cost per turn of safety classification in an agent rollout: incremental (only the turn's new
// items on top of the carried state) versus a full re-scan (every item so far, no state), at
// turns 10, 50 and 200, against a real safety service process.
// Rules: the service's own time (its safety_classify_duration_seconds histogram) and the round
// trip the edge pays (gRPC included, a floor of ~1–2 ms here whatever is scanned), repeated
// (--reps, default 5) and reported as median and range.
// Guard: the real inference worker with the simulated engine as the policy model, once with
// content prefix caching off and once on (the default): tokens sent to the worker and tokens it
// really prefilled (prompt minus what it reused), which differ once the worker caches by content.
// Run (on an otherwise idle machine): npx tsx bench/safety/main.ts [--calls N] [--reps N]
//   (writes bench/results/safety.{json,md})
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { loadCorpus } from '../agent-loop/source-corpus';
import { startBenchStack } from './bench-stack';
import { measureGuard } from './guard-cost';
import { renderSafetyReport, type SafetyReport } from './report';
import { agentRollout, rolloutHeader } from './rollout';
import { measureHeader, measureRules } from './rules-cost';

const ROOT = resolve(__dirname, '../..');
const TURNS = [10, 50, 200] as const;

async function main(): Promise<void> {
  const calls = Number(argValue('--calls') ?? 20);
  const reps = Number(argValue('--reps') ?? 5);
  if (!(reps >= 5)) process.stderr.write(`note: --reps ${reps}: fewer than 5 repetitions give no honest range\n`);
  const corpus = loadCorpus(ROOT);
  const turns = agentRollout(corpus, TURNS[TURNS.length - 1]);
  const loadBefore = loadavg();

  const guard: SafetyReport['guard'] = [];
  let rules: SafetyReport['rules'] = [];
  let header: SafetyReport['header'] | undefined;
  for (const prefixCaching of [false, true]) {
    const stack = await startBenchStack(ROOT, prefixCaching);
    try {
      if (!prefixCaching) {
        // Rules do not involve the worker: measured once, on the first stack.
        const bench = (state: Buffer, items: Parameters<typeof stack.classify>[2]) =>
          stack.classify('bench', state, items, 60_000);
        header = await measureHeader(bench, stack.safetyMetrics, rolloutHeader(corpus), calls);
        rules = await measureRules(bench, stack.safetyMetrics, turns, TURNS, calls, reps);
      }
      const guarded = (state: Buffer, items: Parameters<typeof stack.classify>[2]) =>
        stack.classify('guarded', state, items);
      guard.push({ prefixCaching, rows: await measureGuard(guarded, stack.safetyMetrics, turns, TURNS) });
    } finally {
      stack.close();
    }
  }
  const report: SafetyReport = {
    when: new Date().toISOString(),
    machine: `${cpus().length} × ${cpus()[0]?.model.split(' ').slice(0, 2).join(' ') ?? 'cpu'}, Node ${process.version}`,
    load: { before: loadBefore, after: loadavg() },
    calls,
    reps,
    header: header!,
    rules,
    guard,
  };
  const { json, markdown } = renderSafetyReport(report);
  const dir = join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'safety.json'), JSON.stringify(json, null, 2) + '\n');
  writeFileSync(join(dir, 'safety.md'), markdown);
  process.stdout.write(markdown);
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
