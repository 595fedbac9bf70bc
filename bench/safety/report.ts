import type { GuardRow } from './guard-cost';
import type { Cost, RulesRow } from './rules-cost';

/** Everything one run of bench/safety measured. */
export interface SafetyReport {
  when: string;
  machine: string;
  /** 1/5/15-minute load averages before and after the run (the machine may be shared). */
  load: { before: number[]; after: number[] };
  calls: number;
  reps: number;
  header: Cost & { chars: number; items: number };
  rules: RulesRow[];
  guard: { prefixCaching: boolean; rows: GuardRow[] }[];
}

/** Median and range of a sample. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { median, min: s[0], max: s[s.length - 1] };
}

const f = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(3));
const range = (s: Spread, unit = '') => `${f(s.median)}${unit} (${f(s.min)}–${f(s.max)})`;
const ratio = (a: number, b: number) => (b > 0 ? a / b : Infinity);
const times = (full: number, incremental: number) =>
  full === 0 ? '0 (the re-scan prefilled nothing)' : incremental === 0 ? '—' : `${f(full / incremental)}×`;

/** The report as JSON (with derived spreads) and Markdown. */
export function renderSafetyReport(r: SafetyReport): { json: unknown; markdown: string } {
  const rules = r.rules.map((row) => {
    const serviceRatios = row.full.reps.map((full, i) => ratio(full.serviceMs, row.incremental.reps[i].serviceMs));
    const rttRatios = row.full.reps.map((full, i) => ratio(full.rttMs, row.incremental.reps[i].rttMs));
    return {
      ...row,
      incrementalServiceMs: spread(row.incremental.reps.map((c) => c.serviceMs)),
      fullServiceMs: spread(row.full.reps.map((c) => c.serviceMs)),
      serviceRatio: spread(serviceRatios),
      incrementalRttMs: spread(row.incremental.reps.map((c) => c.rttMs)),
      fullRttMs: spread(row.full.reps.map((c) => c.rttMs)),
      rttRatio: spread(rttRatios),
    };
  });
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  const lines = [
    '# Safety: incremental versus full re-scan per turn',
    '',
    `Run ${r.when} on ${r.machine}; load average (1/5/15 min) ${load(r.load.before)} before, ${load(r.load.after)} after (2 cores, shared with other work: the times are CPU-bound and stretch with load, the token counts do not). Agent rollout: user task, then per turn reasoning + tool call + a 2–8 KB tool output of real source.`,
    '',
    '## Rules (secrets, injection, policy terms)',
    '',
    `${r.reps} repetitions, interleaved over the turns; in each, ${r.calls} calls per incremental point (median round trip) and ${Math.max(3, Math.ceil(r.calls / 3))} per full re-scan; service time = the service's own mean per call (safety_classify_duration_seconds). Each cell: **median over the repetitions (min–max)**; a ratio is taken within each repetition.`,
    '',
    '| turn | incremental: chars / items | full: chars / items | incremental service (ms) | full service (ms) | **service ratio** | incremental round trip (ms) | full round trip (ms) | round-trip ratio | state (bytes) |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rules.map(
      (row) =>
        `| ${row.turn} | ${row.incremental.chars} / ${row.incremental.items} | ${row.full.chars} / ${row.full.items} | ${range(row.incrementalServiceMs)} | ${range(row.fullServiceMs)} | **${range(row.serviceRatio, '×')}** | ${range(row.incrementalRttMs)} | ${range(row.fullRttMs)} | ${range(row.rttRatio, '×')} | ${row.stateBytes} |`,
    ),
    '',
    `The header (instructions + ${r.header.items - 1} tool definitions, ${r.header.chars} chars) costs ${f(r.header.serviceMs)} ms of service time once per distinct header; the edge reuses its verdict while it is unchanged.`,
    '',
    'The incremental cost stays flat (the new items plus one 255-character tail per stream); the full re-scan grows with the conversation. The round trip adds the gRPC floor to both, so its ratio is smaller than the service ratio.',
    '',
    '## Policy (guard) model through Generate sessions',
    '',
    "The guard is the inference worker with the **simulated** engine (SIM_PREFILL_TOKENS_PER_SECOND default 20,000); its verdict means nothing here, the mechanism is what is measured, one call per point. **Sent** = prompt tokens the safety service sends the worker (safety_guard_prompt_tokens_total). **Prefilled** = what the worker really evaluated: its whole guard prompt minus the tokens it reused (safety_guard_prefill_tokens_total, from the worker's `cached_tokens`). The full re-scan starts from an empty state: a new guard session that sends the whole conversation. With content prefix caching **on** (INFERENCE_PREFIX_CACHING, the default) the worker finds that conversation by content — the incremental session has just left it there — so it prefills almost nothing: the saving then shows in tokens sent (bytes, tokenizing, the request), not in prefill. With it **off**, only the carried session is reused and the full re-scan prefills everything.",
    '',
    '| turn | prefix caching | incremental: sent / prefilled | full: sent / prefilled | **sent ratio** | **prefilled ratio** | incremental guard (ms) | full guard (ms) | time ratio |',
    '|---:|:---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.guard.flatMap(({ prefixCaching, rows }) =>
      rows.map(
        (g) =>
          `| ${g.turn} | ${prefixCaching ? 'on' : 'off'} | ${g.incremental.sentTokens} / ${g.incremental.prefilledTokens} | ${g.full.sentTokens} / ${g.full.prefilledTokens} | **${times(g.full.sentTokens, g.incremental.sentTokens)}** | **${times(g.full.prefilledTokens, g.incremental.prefilledTokens)}** | ${f(g.incremental.guardMs)} | ${f(g.full.guardMs)} | ${times(g.full.guardMs, g.incremental.guardMs)} |`,
      ),
    ),
    '',
  ];
  return { json: { ...r, rules }, markdown: lines.join('\n') };
}
