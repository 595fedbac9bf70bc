import type { JsonSchema } from './json-schema';
import type { ParsedPrompt, RenderHeader } from './model-profile';

/**
 * How fastloop asks a policy (guard) model for a verdict and reads its answer: one convention shared
 * by the safety service (which asks) and the simulated engine (which can play a guard), so neither
 * guesses the other's wording.
 */
export const GUARD_VERDICTS = ['safe', 'unsafe'] as const;

/** One of {@link GUARD_VERDICTS}. */
export type GuardVerdictWord = (typeof GUARD_VERDICTS)[number];

/** Ends every guard's instructions: the answer is one word, which is what makes the verdict short. */
export const GUARD_ANSWER_INSTRUCTION = 'Answer with one word: safe or unsafe.';

/**
 * The guard's response format: formats that carry one (chat-template profiles) let the engine
 * sample under its grammar, so a real model can only answer a verdict (a JSON string).
 */
export const GUARD_RESPONSE_FORMAT: NonNullable<RenderHeader['responseFormat']> = {
  name: 'guard_verdict',
  schema: { type: 'string', enum: [...GUARD_VERDICTS] } as JsonSchema,
};

/** The guard's header: the policy followed by {@link GUARD_ANSWER_INSTRUCTION}, and the verdict format. */
export function guardHeader(policy: string): RenderHeader {
  const instructions = policy.includes(GUARD_ANSWER_INSTRUCTION)
    ? policy
    : `${policy.trimEnd()}\n\n${GUARD_ANSWER_INSTRUCTION}`;
  return { instructions, tools: [], responseFormat: GUARD_RESPONSE_FORMAT };
}

/** True when a prompt asks for a guard verdict: its system or developer message carries the answer instruction. */
export function isGuardPrompt(parsed: ParsedPrompt): boolean {
  return parsed.messages.some(
    (m) => (m.author === 'developer' || m.author === 'system') && m.content.includes(GUARD_ANSWER_INSTRUCTION),
  );
}

/**
 * The verdict word of a guard's answer (stop tokens already removed), or undefined when the answer is
 * not one: harmony's channel prefix (`<|channel|>final<|message|>`), JSON quotes, case and a final
 * period are tolerated, nothing else.
 */
export function readGuardVerdict(answer: string): GuardVerdictWord | undefined {
  const marker = '<|message|>';
  const final = answer.includes(marker) ? answer.slice(answer.lastIndexOf(marker) + marker.length) : answer;
  const word = final
    .replace(/<\|[a-z_]+\|>/g, '')
    .trim()
    .replace(/^"(.*)"$/s, '$1')
    .replace(/\.$/, '')
    .trim()
    .toLowerCase();
  return (GUARD_VERDICTS as readonly string[]).includes(word) ? (word as GuardVerdictWord) : undefined;
}
