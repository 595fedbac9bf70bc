import {
  isGuardPrompt,
  type ConversationEntry,
  type GuardVerdictWord,
  type ParsedPrompt,
} from '@fastloop/model-profiles';

/** The simulated engine's guard policy (SIM_GUARD_BLOCK_TERMS). */
export interface SimGuardOptions {
  /** Case-insensitive terms whose presence in the new text makes the verdict `unsafe`. */
  blockTerms: readonly string[];
}

/**
 * The simulated model playing a policy (guard) model: when the prompt asks for a guard verdict (its
 * instructions end with the guard answer instruction the safety service always sends), it answers
 * `unsafe` if the messages after its last answer — the items the safety service just sent — contain
 * one of `blockTerms`, else `safe`. Deterministic, and it reads only the new messages, so a guard
 * session's turn costs what is new. Undefined for any other prompt (the agent script answers).
 */
export function guardCompletion(parsed: ParsedPrompt, options: SimGuardOptions): ConversationEntry | undefined {
  if (!isGuardPrompt(parsed)) return undefined;
  return { kind: 'message', role: 'assistant', text: guardVerdict(parsed, options) };
}

/** `unsafe` when a user message since the last assistant message names a block term. */
export function guardVerdict(parsed: ParsedPrompt, options: SimGuardOptions): GuardVerdictWord {
  const terms = options.blockTerms.map((t) => t.toLowerCase()).filter((t) => t.length > 0);
  for (let i = parsed.messages.length - 1; i >= 0; i--) {
    const m = parsed.messages[i];
    if (m.author === 'assistant') break;
    if (m.author !== 'user') continue;
    const text = m.content.toLowerCase();
    if (terms.some((t) => text.includes(t))) return 'unsafe';
  }
  return 'safe';
}
