import { PRE_INFERENCE_STAGES, STAGES, WORKER_PARTS } from './metrics-scrape';
import { LINK_PRESETS } from '../link/link-emulator';
import type { BenchReport } from './report-json';
import { ESTIMATOR, fmt } from './summary';

/** The Markdown report: settings, per-mode table per TPS, ratios, targets, stage breakdown, method. */
export function renderMarkdown(report: BenchReport): string {
  const { options, summaries } = report;
  const lines: string[] = [];
  lines.push('# Agent-loop benchmark (simulated engine)', '');
  lines.push(
    `Run ${report.generatedAt} on ${report.environment.cpus} × ${report.environment.cpuModel}, Node ${report.environment.node}. ` +
      `${options.turns} turns per rollout. Engine: the SIMULATED accelerator (SIM_TTFT_MS=${options.ttftMs}, ` +
      `SIM_PREFILL_TOKENS_PER_SECOND=${options.prefillTps}, SIM_JITTER=0, INFERENCE_PREFIX_CACHING=${options.prefixCaching}: ${engineBehaviour(options.prefixCaching)}). ` +
      `Client link: ${options.link === 'none' ? 'direct loopback connections' : `the link emulator, preset \`${options.link}\` (${LINK_PRESETS[options.link].description}), between every client and the edge`}.`,
    '',
    `**Isolation.** Every rollout pays its own prefill: each has its own nonce at the start of its instructions and of every tool output ` +
      `(so neither the worker's content prefix cache nor the edge's rendered-entry cache can serve it with another rollout's work), each mode ` +
      `is its own tenant, and every repetition starts on a fresh stack (fresh worker and edge caches, fresh Redis). ` +
      `**Interleaved** (${options.reps} repetition(s)): all modes' rollouts run turn by turn on one stack, one request at a time, in a Williams-balanced ` +
      `order (every mode goes first, and follows every other mode, equally often; "went first" counts it), so machine noise hits every mode alike. ` +
      `**Alone** (${options.soloReps} repetition(s)): each mode's rollout runs by itself on its own fresh stack: what one agent alone would see.`,
    '',
    `**Estimator** (one, throughout): ${ESTIMATOR}.`,
    '',
    "Overhead = client time to the first `response.output_item.added` − the engine's own time to emit the token that opens that item, " +
      'as the worker reported it on that chunk (`engine_elapsed_ms`, from the call reaching its handler; the edge records it as ' +
      '`fastloop_edge_engine_first_item_seconds`). It is what the edge, the internal hops and the client transport add. ' +
      'The column "last 5 vs model" subtracts the sim\'s timing model instead (SIM_TTFT_MS + uncached tokens / prefill rate, then the decode of the item header), ' +
      "so it also charges the worker's own work before the engine (prompt assembly, prefix matching, the sim reading the prompt) and its timer lateness to the stack.",
    '',
  );
  for (const tps of options.tps) {
    const rows = summaries.filter((s) => s.tps === tps && s.phase === 'interleaved');
    if (rows.length === 0) continue;
    const alone = new Map(summaries.filter((s) => s.tps === tps && s.phase === 'solo').map((s) => [s.mode, s]));
    const windows = Object.keys(rows[0].overheadWindows);
    lines.push(`## ${tps} tokens/s`, '');
    lines.push(
      `| mode | rollout (s) | alone: rollout (s) | ${windows.map((w) => `overhead t${w} (ms)`).join(' | ')} | last5/first5 | alone: overhead last 5 (ms) | last 5 vs model (ms) | to response.created p50 (ms) | final prompt (tokens) | sent (KB) | went first |`,
    );
    lines.push(`|---|---:|---:|${windows.map(() => '---:').join('|')}|---:|---:|---:|---:|---:|---:|---:|`);
    for (const s of rows) {
      const a = alone.get(s.mode);
      lines.push(
        `| ${s.mode} | ${fmt(s.rolloutMs / 1000)} | ${a ? fmt(a.rolloutMs / 1000) : '—'} | ${windows.map((w) => fmt(s.overheadWindows[w])).join(' | ')} | ${fmt(s.growthLast5)}× | ${a ? fmt(a.overheadLast5) : '—'} | ${fmt(s.modelOverheadLast5)} | ${fmt(s.createdP50Ms)} | ${s.finalInputTokens} | ${fmt(s.requestBytes / 1024)} | ${s.wentFirst} |`,
      );
    }
    lines.push('');
  }
  if (report.ratios.length > 0) {
    lines.push('## Side by side (same run)', '', '| TPS | rollouts | ratio | value |', '|---:|---|---|---:|');
    for (const r of report.ratios)
      lines.push(`| ${r.tps} | ${r.phase === 'solo' ? 'alone' : 'interleaved'} | ${r.label} | ${fmt(r.value)} |`);
    lines.push('');
  }
  if (report.targets.length > 0) {
    lines.push('## Targets', '', '| target | measured | met |', '|---|---|---|');
    for (const t of report.targets) lines.push(`| ${t.target} | ${t.measured} | ${t.met ? 'yes' : '**no**'} |`);
    lines.push('');
  }
  lines.push('## Where the overhead goes (ms, interleaved; first 5 turns → last 5 turns)', '');
  const partNames = [
    'overhead',
    'edgeObserved',
    'toCreated',
    'preInference',
    'inferenceHop',
    'engineLate',
    'untimed',
  ] as const;
  lines.push(`| TPS | mode | ${partNames.join(' | ')} |`, `|---:|---|${partNames.map(() => '---:').join('|')}|`);
  for (const s of summaries.filter((x) => x.phase === 'interleaved')) {
    lines.push(
      `| ${s.tps} | ${s.mode} | ${partNames.map((k) => `${fmt(s.parts.early[k])} → ${fmt(s.parts.late[k])}`).join(' | ')} |`,
    );
  }
  lines.push(
    '',
    "`edgeObserved`: the edge's own `fastloop_edge_first_item_overhead_seconds` (request in → first item out, minus the engine); `overhead` − `edgeObserved` is the client's side and its WebSocket or HTTP legs. " +
      '`toCreated`: client send → `response.created`. `preInference`: edge stages validate+route+render+safety+queue. ' +
      "`inferenceHop`: edge `ttft` stage − the worker's measured TTFT (`inference_ttft_seconds`). `engineLate`: measured − modelled engine TTFT (not in the overhead). " +
      '`untimed`: overhead − preInference − inferenceHop: client and transport, and edge work outside the stage timer ' +
      '(HTTP body read and JSON parse, the HTTP `previous_response_id` store load, event delivery). ' +
      'Each column is its own p50, so columns need not add up, and `untimed` can dip below 0 by timer noise.',
    '',
  );
  lines.push(
    "## The inference worker's own time per turn (ms, interleaved; first 5 turns → last 5 turns)",
    '',
    `| TPS | mode | ${[...WORKER_PARTS, 'total'].join(' | ')} |`,
    `|---:|---|${[...WORKER_PARTS, 'total'].map(() => '---:').join('|')}|`,
  );
  for (const s of summaries.filter((x) => x.phase === 'interleaved')) {
    lines.push(
      `| ${s.tps} | ${s.mode} | ${[...WORKER_PARTS, 'total'].map((k) => `${fmt(s.worker.early[k])} → ${fmt(s.worker.late[k])}`).join(' | ')} |`,
    );
  }
  lines.push(
    '',
    "From the worker's `inference_worker_seconds`: `prepare` = the call's arrival → the engine is called (session lookup, prompt assembly, " +
      'validation, prefix matching); `engine_read` = the simulator reading the prompt (its parse; inside the engine time, so not in the overhead above); ' +
      '`keep` = after the stream (holding prompt + completion for the session). A cached turn should cost the same at turn 50 as at turn 1.',
    '',
  );
  lines.push('## Edge stages (mean ms per turn, from `fastloop_edge_turn_stage_seconds`)', '');
  lines.push(
    `| TPS | mode | ${STAGES.join(' | ')} | pre-inference sum |`,
    `|---:|---|${STAGES.map(() => '---:').join('|')}|---:|`,
  );
  for (const s of summaries.filter((x) => x.phase === 'interleaved')) {
    const pre = PRE_INFERENCE_STAGES.reduce((a, k) => a + (s.stageMeanMs[k] ?? 0), 0);
    lines.push(`| ${s.tps} | ${s.mode} | ${STAGES.map((k) => fmt(s.stageMeanMs[k])).join(' | ')} | ${fmt(pre)} |`);
  }
  lines.push('', "`ttft` and `stream` include the engine's simulated time; `post` runs after the terminal event.", '');
  if (report.notes.length > 0) {
    lines.push('## Notes', '');
    for (const n of report.notes) lines.push(`- ${n}`);
    lines.push('');
  }
  lines.push('![overhead per turn](agent-loop.svg)', '');
  return lines.join('\n');
}

/** Which engine the prefix-caching setting models, in the report's words. */
export function engineBehaviour(prefixCaching: boolean): string {
  return prefixCaching
    ? 'a request reuses any prefix the worker holds by content, like vLLM / SGLang automatic prefix caching, so a stateless resend is not prefilled again'
    : 'a request reuses only the KV its own conversation left on the worker (session_key / parent_session_key), like an engine that keeps a ' +
        "conversation's KV between calls but does no content matching (llama.cpp server's per-slot prompt cache, node-llama-cpp context sequences): " +
        'http-previous, ws and grpc chain by response id and reuse it; http-stateless names no previous response, so it prefills the whole history every turn';
}
