import type { TokenView } from './token-log';
import type { ConversationState } from './conversation-state';
import type { Turn } from './turn';

/** What to send to the worker: only the tokens it does not hold yet. */
export interface GeneratePlan {
  sessionKey: string;
  parentSessionKey: string;
  prefixLength: number;
  /**
   * Prompt tokens after `prefixLength` (the whole prompt when 0), as the Generate request carries
   * them: an array filled by index, not `Array.from` of a typed array (its iterator showed as ~2% of
   * the edge's CPU in a profile at 100 agent loops).
   */
  tokens: number[];
  promptLength: number;
}

/**
 * Plans a Generate call. The worker holds the previous prompt ++ its sampled tokens under the
 * previous response id; everything before the previous generation prompt is known equal (same
 * header, append-only rendering), so only the span from there is compared: O(previous output),
 * not O(history). A changed header or another worker means no prefix (the worker still reuses
 * what matches via `parentSessionKey`).
 */
export function planGenerate(
  responseId: string,
  rendered: { tokens: TokenView; headerKey: string },
  generationPrompt: readonly number[],
  previous: ConversationState | undefined,
  workerId: string,
): GeneratePlan {
  // The generation prompt is not appended to the shared log: the next state appends the output
  // entries there, and a log only appends in place at its tip.
  const r = rendered.tokens.length;
  const promptLength = r + generationPrompt.length;
  const tokenAt = (i: number) => (i < r ? rendered.tokens.at(i) : generationPrompt[i - r]);
  let prefixLength = 0;
  let parentSessionKey = '';
  if (previous && previous.route.workerId === workerId) {
    // Even with no known prefix (a state rebuilt from the store) the worker may still hold the
    // previous session and reuse whatever matches.
    parentSessionKey = previous.response.id;
    if (previous.workerPrefixLength > 0 && previous.rendered.headerKey === rendered.headerKey) {
      const start = previous.workerPrefixLength - generationPrompt.length;
      const held = generationPrompt.concat(previous.sampled);
      let k = 0;
      while (k < held.length && start + k < promptLength && tokenAt(start + k) === held[k]) k++;
      // Leave at least one token to send: an engine needs a new token to sample from.
      prefixLength = Math.min(start + k, promptLength - 1);
    }
  }
  // Sized once: an array grown by push copied itself ~log2(n) times (a tool output is ~1,000+ tokens).
  const tokens = new Array<number>(promptLength - prefixLength);
  let k = 0;
  if (prefixLength < r) {
    const rest = rendered.tokens.slice(prefixLength);
    for (let i = 0; i < rest.length; i++) tokens[k++] = rest[i];
  }
  for (let i = Math.max(0, prefixLength - r); i < generationPrompt.length; i++) tokens[k++] = generationPrompt[i];
  return { sessionKey: responseId, parentSessionKey, prefixLength, tokens, promptLength };
}

/**
 * What to send for a turn's rendering: only the tokens the worker does not hold yet (same worker
 * as the previous response), or the whole prompt (`full`: after a prefix miss or on another worker).
 */
export function planFor(turn: Turn, full = false): GeneratePlan {
  const { rendered, profile } = turn.rendering;
  const gen = profile.renderGenerationPrompt();
  const id = turn.writer.response.id;
  return full
    ? planGenerate(id, rendered, gen, undefined, '')
    : planGenerate(id, rendered, gen, turn.req.previous, turn.route.workerId);
}
