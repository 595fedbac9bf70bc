/**
 * Agent-loop benchmark: a coding-agent rollout (instructions, ten tools, N turns of tool calls
 * answered with real source text, then an answer) against the real stack with the simulated
 * engine, over HTTP stateless, HTTP previous_response_id, WebSocket mode and gRPC bidi, side by
 * side. See bench/agent-loop/README.md.
 *
 *   npm run bench:agent-loop -- --quick
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { OptionsError, parseOptions } from './options';
import { buildReport, renderJson } from './report-json';
import { renderMarkdown } from './report-md';
import { renderSvg } from './report-svg';
import type { TurnRecord } from './rollout-runner';
import { loadCorpus } from './source-corpus';
import { checkTargets, fmt, growthNotes, ratios, summarizeMode } from './summary';
import { runTps } from './tps-run';
import { consistencyNotes } from './consistency';

const REPO_ROOT = resolve(__dirname, '..', '..');
const progress = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), REPO_ROOT);
  const corpus = loadCorpus(REPO_ROOT);
  progress(
    `agent-loop: ${options.turns} turns × modes ${options.modes.join(', ')} × TPS ${options.tps.join(', ')}; ` +
      `${corpus.length} source files for tool outputs of ${options.outputBytes[0]}–${options.outputBytes[1]} bytes`,
  );
  const started = performance.now();
  const records: TurnRecord[] = [];
  for (const tps of options.tps) {
    const t0 = performance.now();
    records.push(...(await runTps(options, tps, corpus, progress)));
    progress(`[tps=${tps}] done in ${fmt((performance.now() - t0) / 1000)} s`);
  }
  const phases = options.soloReps > 0 ? (['interleaved', 'solo'] as const) : (['interleaved'] as const);
  const summaries = phases.flatMap((phase) =>
    options.tps.flatMap((tps) => options.modes.map((mode) => summarizeMode(mode, tps, records, phase))),
  );
  const notes = [...consistencyNotes(records, options), ...growthNotes(summaries)];
  const report = buildReport(options, {
    summaries,
    ratios: ratios(summaries),
    targets: checkTargets(summaries, options),
    notes,
    records,
  });
  mkdirSync(options.outDir, { recursive: true });
  const files = {
    json: join(options.outDir, 'agent-loop.json'),
    md: join(options.outDir, 'agent-loop.md'),
    svg: join(options.outDir, 'agent-loop.svg'),
  };
  writeFileSync(files.json, renderJson(report));
  writeFileSync(files.md, renderMarkdown(report));
  writeFileSync(files.svg, renderSvg(summaries));

  // The CLI's result: the Markdown tables, then the side-by-side ratios and targets in one glance.
  process.stdout.write(`${renderMarkdown(report)}\n`);
  process.stdout.write('Side by side (same run):\n');
  for (const r of report.ratios.filter((x) => x.label.endsWith('rollout time'))) {
    process.stdout.write(
      `  [tps=${r.tps}, ${r.phase}] ${r.label}: ${fmt(r.value)} (${fmt((1 - r.value) * 100)}% faster)\n`,
    );
  }
  for (const t of report.targets) process.stdout.write(`  ${t.met ? 'MET ' : 'MISS'} ${t.target}: ${t.measured}\n`);
  process.stdout.write(
    `\nwrote ${files.json}, ${files.md}, ${files.svg} in ${fmt((performance.now() - started) / 1000)} s\n`,
  );
}

main().catch((err: unknown) => {
  if (err instanceof OptionsError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `agent-loop benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
