import { PRE_INFERENCE_STAGES, STAGES } from './metrics-scrape';
import type { BenchReport } from './report-json';
import { checkpointTurns, fmt } from './summary';

/** The Markdown report: settings, per-mode table per TPS, ratios, targets, stage breakdown, method. */
export function renderMarkdown(report: BenchReport): string {
  const { options, summaries } = report;
  const lines: string[] = [];
  lines.push('# Agent-loop benchmark (simulated engine)', '');
  lines.push(
    `Run ${report.generatedAt} on ${report.environment.cpus} × ${report.environment.cpuModel}, Node ${report.environment.node}. ` +
      `${options.turns} turns per rollout, ${options.reps} repetition(s), modes interleaved round-robin per turn on one stack per TPS setting. ` +
      `Engine: the SIMULATED accelerator (SIM_TTFT_MS=${options.ttftMs}, SIM_PREFILL_TOKENS_PER_SECOND=${options.prefillTps}, SIM_JITTER=0, ` +
      `INFERENCE_PREFIX_CACHING=${options.prefixCaching}: ${options.prefixCaching ? 'a stateless request reuses any held prefix by content, as with vLLM automatic prefix caching' : 'only a session\'s own prefix is reused, as in an engine without prefix caching'}).`,
    '',
    'Overhead = client time to the first `response.output_item.added` − the engine\'s own time to emit the token that opens that item, ' +
      'as the worker reported it on that chunk (`engine_elapsed_ms`, from the call reaching its handler; the edge records it as ' +
      '`fastloop_edge_engine_first_item_seconds`). It is what the edge, the internal hops and the client transport add. ' +
      'The column "last 5 vs model" subtracts the sim\'s timing model instead (SIM_TTFT_MS + uncached tokens / prefill rate, then the decode of the item header), ' +
      'so it also charges the worker\'s own lateness (timers firing late, prompt assembly, GC) to the stack.',
    '',
  );
  for (const tps of options.tps) {
    const rows = summaries.filter((s) => s.tps === tps);
    if (rows.length === 0) continue;
    const checkpoints = checkpointTurns(rows[0].turns);
    lines.push(`## ${tps} tokens/s`, '');
    lines.push(
      `| mode | rollout (s) | ${checkpoints.map((t) => `overhead t${t} (ms)`).join(' | ')} | growth t${rows[0].turns}/t1 | last5/first5 | last 5 vs model (ms) | to response.created p50 (ms) | final prompt (tokens) | sent (KB) |`,
    );
    lines.push(`|---|---:|${checkpoints.map(() => '---:').join('|')}|---:|---:|---:|---:|---:|---:|`);
    for (const s of rows) {
      lines.push(
        `| ${s.mode} | ${fmt(s.rolloutMs / 1000)} | ${checkpoints.map((t) => fmt(s.overheadAt[t])).join(' | ')} | ${fmt(s.growth)}× | ${fmt(s.growthLast5)}× | ${fmt(s.modelOverheadLast5)} | ${fmt(s.createdP50Ms)} | ${s.finalInputTokens} | ${fmt(s.requestBytes / 1024)} |`,
      );
    }
    lines.push('');
  }
  if (report.ratios.length > 0) {
    lines.push('## Side by side (same run, same stack)', '', '| TPS | ratio | value |', '|---:|---|---:|');
    for (const r of report.ratios) lines.push(`| ${r.tps} | ${r.label} | ${fmt(r.value)} |`);
    lines.push('');
  }
  if (report.targets.length > 0) {
    lines.push('## Targets', '', '| target | measured | met |', '|---|---|---|');
    for (const t of report.targets) lines.push(`| ${t.target} | ${t.measured} | ${t.met ? 'yes' : '**no**'} |`);
    lines.push('');
  }
  lines.push('## Where the overhead goes (ms, p50; turns 2–6 → last 5 turns)', '');
  const partNames = ['overhead', 'edgeObserved', 'toCreated', 'preInference', 'inferenceHop', 'engineLate', 'untimed'] as const;
  lines.push(`| TPS | mode | ${partNames.join(' | ')} |`, `|---:|---|${partNames.map(() => '---:').join('|')}|`);
  for (const s of summaries) {
    lines.push(`| ${s.tps} | ${s.mode} | ${partNames.map((k) => `${fmt(s.parts.early[k])} → ${fmt(s.parts.late[k])}`).join(' | ')} |`);
  }
  lines.push(
    '',
    '`edgeObserved`: the edge\'s own `fastloop_edge_first_item_overhead_seconds` (request in → first item out, minus the engine); `overhead` − `edgeObserved` is the client\'s side and its WebSocket or HTTP legs. ' +
      '`toCreated`: client send → `response.created`. `preInference`: edge stages validate+route+render+safety+queue. ' +
      '`inferenceHop`: edge `ttft` stage − the worker\'s measured TTFT (`inference_ttft_seconds`). `engineLate`: measured − modelled engine TTFT (not in the overhead). ' +
      '`untimed`: overhead − preInference − inferenceHop: client and transport, and edge work outside the stage timer ' +
      '(HTTP body read and JSON parse, the HTTP `previous_response_id` store load, event delivery). ' +
      'Each column is its own p50, so columns need not add up, and `untimed` can dip below 0 by timer noise.',
    '',
  );
  lines.push('## Edge stages (mean ms per turn, from `fastloop_edge_turn_stage_seconds`)', '');
  lines.push(`| TPS | mode | ${STAGES.join(' | ')} | pre-inference sum |`, `|---:|---|${STAGES.map(() => '---:').join('|')}|---:|`);
  for (const s of summaries) {
    const pre = PRE_INFERENCE_STAGES.reduce((a, k) => a + (s.stageMeanMs[k] ?? 0), 0);
    lines.push(`| ${s.tps} | ${s.mode} | ${STAGES.map((k) => fmt(s.stageMeanMs[k])).join(' | ')} | ${fmt(pre)} |`);
  }
  lines.push('', '`ttft` and `stream` include the engine\'s simulated time; `post` runs after the terminal event.', '');
  if (report.notes.length > 0) {
    lines.push('## Notes', '');
    for (const n of report.notes) lines.push(`- ${n}`);
    lines.push('');
  }
  lines.push('![overhead per turn](agent-loop.svg)', '');
  return lines.join('\n');
}
