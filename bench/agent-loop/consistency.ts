import type { BenchOptions } from './options';
import type { TurnRecord } from './rollout-runner';

/**
 * Checks a run should pass before its numbers mean anything, as notes for the report:
 * - every rollout ran `turns` turns and ended with the answer (tool calls before it);
 * - every mode saw the same prompt at every turn: the transports must render the same
 *   conversation to the same tokens (incremental == stateless), so `input_tokens` must match.
 */
export function consistencyNotes(records: readonly TurnRecord[], options: Pick<BenchOptions, 'turns'>): string[] {
  const notes: string[] = [];
  const rollouts = new Map<string, TurnRecord[]>();
  for (const r of records) {
    const key = `${r.tps}|${r.mode}|${r.phase}|${r.rep}`;
    rollouts.set(key, [...(rollouts.get(key) ?? []), r]);
  }
  for (const [key, turns] of rollouts) {
    const [tps, mode, phase, rep] = key.split('|');
    const last = turns[turns.length - 1];
    if (turns.length !== options.turns)
      notes.push(`[tps=${tps}] ${mode} ${phase} rep ${rep}: ran ${turns.length} turns, expected ${options.turns}.`);
    if (last.outputType !== 'message')
      notes.push(
        `[tps=${tps}] ${mode} ${phase} rep ${rep}: the last turn returned ${last.outputType}, expected the final message.`,
      );
    const early = turns.slice(0, -1).filter((t) => t.outputType !== 'function_call');
    if (early.length > 0)
      notes.push(
        `[tps=${tps}] ${mode} ${phase} rep ${rep}: turns ${early.map((t) => t.turn).join(', ')} did not return a function call.`,
      );
  }
  const byTurn = new Map<string, TurnRecord[]>();
  for (const r of records) {
    const key = `${r.tps}|${r.turn}`;
    byTurn.set(key, [...(byTurn.get(key) ?? []), r]);
  }
  const mismatches: string[] = [];
  for (const [key, same] of byTurn) {
    const sizes = new Set(same.map((r) => r.inputTokens));
    if (sizes.size > 1) {
      const [tps, turn] = key.split('|');
      mismatches.push(
        `tps=${tps} turn ${turn}: ${same.map((r) => `${r.mode}/${r.phase}/${r.rep}=${r.inputTokens}`).join(', ')}`,
      );
    }
  }
  if (mismatches.length > 0) {
    notes.push(
      `Prompt sizes differ between modes at the same turn (${mismatches.length} turns), first: ${mismatches.slice(0, 3).join('; ')}.`,
    );
  } else if (records.length > 0) {
    notes.push(
      'Every rollout (every mode, phase and repetition, each with its own nonce) sent the engine the same number of prompt tokens at every turn (incremental == stateless prompt size).',
    );
  }
  return notes;
}
