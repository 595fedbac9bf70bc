/** One measured turn of one conversation mode on one engine. */
export interface EngineTurn {
  engine: string;
  mode: Mode;
  turn: number;
  inputTokens: number;
  cachedTokens: number;
  /** Prompt tokens the engine evaluated (worker metric; absent for engines that do not report it). */
  evaluatedTokens?: number;
  outputTokens: number;
  /** Client-side: request sent → first output text delta. */
  ttftMs: number;
  /** Client-side: output tokens after the first over the time from the first to the last delta. */
  tokensPerSecond: number;
}

/**
 * `ws`: WebSocket continuation (only the new message, `previous_response_id`, session KV reused);
 * `resend`: stateless HTTP resend of the whole conversation (the engine may still match the prefix
 * by content); `resend-cold`: the same with a per-turn instruction nonce, so no prefix is reused.
 */
export type Mode = 'ws' | 'resend' | 'resend-cold';
export const MODES: readonly Mode[] = ['ws', 'resend', 'resend-cold'];

/** Output tokens after the first over the span of the deltas; 0 when there is no span. */
export function decodeRate(outputTokens: number, firstDeltaMs: number, lastDeltaMs: number): number {
  const span = lastDeltaMs - firstDeltaMs;
  return outputTokens > 1 && span > 0 ? ((outputTokens - 1) * 1000) / span : 0;
}

const fmt = (n: number | undefined, digits = 1) => (n === undefined ? '–' : n.toFixed(digits));

/** A table per engine: one row per turn, the three modes side by side, and the TTFT ratio. */
export function renderMarkdown(turns: readonly EngineTurn[], meta: { date: string; machine: string }): string {
  const out = [
    `# bench/engines — WebSocket continuation vs stateless resend`,
    '',
    `${meta.date}, ${meta.machine}. TTFT and decode rate are client-side; "eval" is what the engine prefilled.`,
    '',
  ];
  for (const engine of [...new Set(turns.map((t) => t.engine))]) {
    out.push(
      `## ${engine}`,
      '',
      '| turn | input tokens (ws) | ws TTFT ms | ws cached / eval | resend TTFT ms | resend cached / eval | cold TTFT ms | cold eval | cold/ws TTFT | ws tok/s | cold tok/s |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
    );
    const byTurn = new Map<number, Partial<Record<Mode, EngineTurn>>>();
    for (const t of turns.filter((x) => x.engine === engine))
      byTurn.set(t.turn, { ...byTurn.get(t.turn), [t.mode]: t });
    for (const [turn, row] of [...byTurn].sort((a, b) => a[0] - b[0])) {
      const { ws, resend, 'resend-cold': cold } = row;
      const ratio = ws && cold && ws.ttftMs > 0 ? cold.ttftMs / ws.ttftMs : undefined;
      out.push(
        `| ${turn} | ${ws?.inputTokens ?? '–'} | ${fmt(ws?.ttftMs)} | ${ws?.cachedTokens ?? '–'} / ${ws?.evaluatedTokens ?? '–'} | ${fmt(resend?.ttftMs)} | ${resend?.cachedTokens ?? '–'} / ${resend?.evaluatedTokens ?? '–'} | ${fmt(cold?.ttftMs)} | ${cold?.evaluatedTokens ?? '–'} | ${fmt(ratio, 2)} | ${fmt(ws?.tokensPerSecond, 0)} | ${fmt(cold?.tokensPerSecond, 0)} |`,
      );
    }
    out.push('');
  }
  return out.join('\n');
}
