import type { safetyV1 } from '@fastloop/proto';
import { redactionMasks } from '../safety/redact-entries';
import { recordNoticed } from '../safety/safety-findings';
import { renderRedacted } from './render-stage';
import type { Turn } from './turn';

/**
 * The judge stage: nothing reaches the client before the safety verdict, so a blocked prompt is an
 * error, not a response. Awaits the verdict (a block rejects with the ApiError), masks what safety
 * asked to redact in what the model reads, records what it flagged, and sends `response.created`.
 * Resolves true when redaction changed what the model reads (a Generate call already made with
 * the unmasked prompt must be made again).
 */
export async function judge(turn: Turn): Promise<boolean> {
  const { deps, req } = turn;
  const verdict = await turn.verdict.get();
  turn.timer.mark('safety');
  const redacted = await redact(
    turn,
    verdict.noticed.filter((n) => n.source === 'input').map((n) => n.finding),
  );
  recordNoticed(deps.metrics, req.logger, turn.writer.response, verdict.noticed);
  turn.safety = verdict;
  turn.writer.created();
  // In-line compaction's item comes first in the output, before anything is sampled.
  if (turn.compaction) turn.writer.addCompaction(turn.compaction);
  turn.enter('judged');
  return redacted;
}

/**
 * Masks the redact findings' spans in what the model reads (the client's items stay as sent):
 * this turn's new entries, or, for a reloaded redacted conversation, every entry. False when no
 * finding asks to redact an item the model will read now.
 */
async function redact(turn: Turn, findings: readonly safetyV1.Finding[]): Promise<boolean> {
  const { input, rendering, req } = turn;
  if (rendering.overflow) return false; // the turn fails after the verdict; nothing is rendered for a worker
  // A reloaded conversation's entries were rebuilt without masks: mask every item and render it all again.
  const all = req.previous?.unmasked === true;
  const masks = redactionMasks(findings, all ? 0 : input.inputStart, input.inputStart + input.newItems.length);
  if (masks.size === 0) return false;
  turn.rendering = await renderRedacted(turn, masks, all);
  return true;
}
