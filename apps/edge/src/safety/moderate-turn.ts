import type { TurnDeps, TurnRequest } from '../turn/turn-deps';
import type { TurnWriter } from '../turn/turn-writer';
import { backendError } from '../turn/prepare-turn';
import { OutputModerator } from './output-moderator';
import { recordNoticed } from './safety-findings';

/** An output moderator for this turn, or undefined when moderation is off. */
export function moderatorFor(
  deps: TurnDeps,
  req: TurnRequest,
  writer: TurnWriter,
  onBlock: () => void,
): OutputModerator | undefined {
  const options = deps.outputModeration;
  if (!options) return undefined;
  return new OutputModerator(writer, {
    classify: (request) => deps.backends.classify(request, req.signal),
    tenant: req.principal.tenant,
    model: req.body.model,
    chunkChars: options.chunkChars,
    onBlock,
  });
}

/**
 * Judges and releases the rest of the output; records what was flagged or blocked. Resolves
 * false when the output was blocked (the caller ends the response `incomplete`, `content_filter`).
 */
export async function finishModeration(
  deps: TurnDeps,
  req: TurnRequest,
  writer: TurnWriter,
  moderator: OutputModerator,
): Promise<boolean> {
  const released = await moderator.finish().catch((err: unknown) => {
    throw backendError('safety', err); // moderation fails closed: the response fails
  });
  recordNoticed(
    deps.metrics,
    req.logger,
    writer.response,
    moderator.flagged.map((finding) => ({ source: 'output' as const, finding })),
  );
  if (!released) {
    const f = moderator.blocked;
    deps.metrics.outputBlocks.inc({ rule: f?.ruleId ?? 'unknown' });
    req.logger.warn({ rule: f?.ruleId, category: f?.category }, 'output blocked by safety');
  }
  return released;
}
