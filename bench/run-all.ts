/**
 * The full benchmark suite, one command, for an idle machine (about 35 minutes on the 2-core dev
 * box). Each step is its own process; a failing step stops the suite. Writes everything under
 * bench/results/ and finally the README's figures from those reports.
 *
 *   npm run bench:full                 (the whole suite)
 *   npm run bench:full -- --quick      (every step with --quick: checks the suite works, ~10 min; writes to bench/results/quick/)
 */
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..');

/** One step: a label and the script with its arguments (run with tsx). */
type Step = [label: string, script: string, args: string[]];

/** The steps of a full (or quick) run writing under `out`. */
export function suiteSteps(quick: boolean, out: string): Step[] {
  const q = quick ? ['--quick'] : [];
  const link = (preset: string): Step => [
    `agent loop over the ${preset} link`,
    'bench/agent-loop/main.ts',
    [...q, '--tps', '1000', '--solo', '0', '--link', preset, '--out', join(out, 'link', preset)],
  ];
  return [
    ['agent loop (65 / 1,000 / 4,000 tok/s, interleaved and alone)', 'bench/agent-loop/main.ts', [...q, '--out', out]],
    [
      'agent loop, engine prefix caching off',
      'bench/agent-loop/main.ts',
      [...q, '--prefix-caching', 'off', '--tps', '1000', '--out', join(out, 'prefix-caching-off')],
    ],
    link('same-host'),
    link('cloud'),
    link('home'),
    ['link side by side', 'bench/agent-loop/link-report.ts', [join(out, 'link')]],
    [
      'instant engine beside the transport floor',
      'bench/agent-loop/instant.ts',
      [...(quick ? ['--reps', '1'] : []), '--out', out],
    ],
    ['transport floor', 'bench/micro/transport-floor.bench.ts', ['--out', out]],
    ['capacity (bench/load)', 'bench/load/main.ts', [...q, '--out', out]],
    ['first visible text, output moderation on vs off', 'bench/load/first-text.ts', [...q, '--out', out]],
    [
      'engines: continuation, resend, cold, and llama.cpp driven directly (sim, llamacpp)',
      'bench/engines/main.ts',
      [...q, '--out', out],
    ],
    [
      'llamacpp tool-call turns: what each re-evaluates',
      'bench/engines/tool-call-turns.ts',
      [...(quick ? ['--turns', '3'] : []), '--label', 'after', '--out', out],
    ],
  ];
}

function main(): void {
  const quick = process.argv.includes('--quick');
  const out = join(ROOT, 'bench', 'results', ...(quick ? ['quick'] : []));
  const started = Date.now();
  for (const [label, script, args] of suiteSteps(quick, out)) {
    const t0 = Date.now();
    process.stderr.write(`\n=== ${label}: tsx ${script} ${args.join(' ')}\n`);
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, script), ...args], {
      cwd: ROOT,
      stdio: 'inherit',
    });
    if (r.status !== 0) {
      process.stderr.write(`=== ${label} failed (exit ${r.status ?? r.signal}); stopping\n`);
      process.exit(1);
    }
    process.stderr.write(`=== ${label}: ${((Date.now() - t0) / 60_000).toFixed(1)} min\n`);
  }
  // The README quotes the committed reports; a quick run does not touch it.
  if (!quick)
    spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'readme-figures.ts')], {
      cwd: ROOT,
      stdio: 'inherit',
    });
  process.stderr.write(`\nbench:full done in ${((Date.now() - started) / 60_000).toFixed(1)} min; reports in ${out}\n`);
}

if (require.main === module) main();
