import { failureOf } from '../api-errors';
import { OutputModerator } from '../safety/output-moderator';
import { recordNoticed } from '../safety/safety-findings';
import type { Turn } from './turn';

/**
 * The turn's output moderator, or undefined when moderation is off. Parsed output goes through it
 * on its way to the writer; a block stops generation (`turn.stop`).
 */
export function moderatorFor(turn: Turn): OutputModerator | undefined {
  const { deps, req } = turn;
  const options = deps.outputModeration;
  if (!options) return undefined;
  return new OutputModerator(turn.writer, {
    classify: (request) => deps.backends.classify(request, req.signal),
    tenant: req.principal.tenant,
    model: req.body.model,
    chunkChars: options.chunkChars,
    onBlock: () => turn.stop.abort(),
  });
}

/**
 * Judges and releases the rest of the output; records what was flagged or blocked. Resolves
 * false when the output was blocked (the response then ends `incomplete`, `content_filter`).
 * Moderation fails closed: a Classify failure fails the response.
 */
export async function finishModeration(turn: Turn, moderator: OutputModerator): Promise<boolean> {
  const { deps, req } = turn;
  const released = await moderator.finish().catch(failureOf('safety'));
  recordNoticed(
    deps.metrics,
    req.logger,
    turn.writer.response,
    moderator.flagged.map((finding) => ({ source: 'output' as const, finding })),
  );
  if (!released) {
    const f = moderator.blocked;
    deps.metrics.outputBlocks.inc({ rule: f?.ruleId ?? 'unknown' });
    req.logger.warn({ rule: f?.ruleId, category: f?.category }, 'output blocked by safety');
  }
  return released;
}
