import type { ParsedPromptMessage, ParsedTool } from '@fastloop/model-profiles';
import { instructedSteps, QUOTED_SPANS, type InstructedStep } from './sim-instructions';

/**
 * A request to write a handoff summary of the conversation so far, so that the work can go on in a
 * fresh context: what a compacting client or server asks the model ("… write a handoff summary …",
 * "CONTEXT CHECKPOINT COMPACTION. Create a handoff summary …"). A summary already written and read
 * back ("Summary of the conversation so far, written when …") asks for nothing, and a request that
 * only asks to summarise findings ("Now summarise what you found") is an ordinary question.
 */
export function asksForHandoff(text: string): boolean {
  return (
    /\b(?:write|create|produce|make)\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+){0,2}summary\b/i.test(text) &&
    /\b(?:compact\w*|hand-?off|checkpoint|fresh context)\b/i.test(text)
  );
}

/**
 * The handoff summary a capable model writes, derived from the conversation alone: the request it
 * was working on (the user message before the summary request, its quoted spans shown in quotes),
 * the instructed calls already made, and the remaining ones as instructions in the same words the
 * user used ("run `x` with exec_command"), so that the model reading the summary in a fresh context
 * carries on where the work stopped instead of starting again. `tools` are the tools offered (none
 * when the summary turn hides them); the tools called since the request are added, so that the
 * request's steps still parse.
 */
export function handoffSummary(messages: readonly ParsedPromptMessage[], tools: readonly ParsedTool[]): string {
  const { goal, called } = workSinceRequest(messages);
  const known = [...tools, ...called.map(calledTool)];
  const steps = goal === undefined ? [] : instructedSteps(known, goal);
  const done = steps.slice(0, called.length).map((s) => `${displayName(s.tool)} "${firstLine(s.span)}"`);
  const next = steps.slice(called.length).map(nextStep);
  return [
    `The user asked: ${goal === undefined ? '(nothing yet)' : condensed(unquoted(goal))}`,
    `Done so far: ${done.length > 0 ? done.join('; ') : called.length > 0 ? called.join('; ') : 'nothing yet'}.`,
    next.length > 0 ? `Next steps: ${next.join(', then ')}.` : 'Next steps: none; answer the user.',
  ].join('\n');
}

/**
 * The user message before the last one (the summary request), if any, and the tools called between
 * the two, in order (`name`, or `namespace.name` outside `functions`).
 */
function workSinceRequest(messages: readonly ParsedPromptMessage[]): { goal?: string; called: string[] } {
  const users = messages.flatMap((m, i) => (m.author === 'user' ? [i] : []));
  if (users.length < 2) return { called: [] };
  const [from, to] = users.slice(-2);
  const called = messages
    .slice(from + 1, to)
    .flatMap((m) =>
      m.author === 'assistant' && m.recipient !== undefined && m.recipient !== 'assistant' ? [m.recipient] : [],
    )
    .map((r) => (r.startsWith('functions.') ? r.slice('functions.'.length) : r));
  return { goal: messages[from].content, called };
}

function calledTool(name: string): ParsedTool {
  const dot = name.lastIndexOf('.');
  return dot < 0
    ? { namespace: 'functions', name, parameters: { type: 'object' } }
    : { namespace: name.slice(0, dot), name: name.slice(dot + 1), parameters: { type: 'object' } };
}

function displayName(tool: ParsedTool): string {
  return tool.namespace === 'functions' ? tool.name : `${tool.namespace}.${tool.name}`;
}

/** A remaining step, quoted as the user quoted it so that it reads as the same instruction. */
function nextStep(step: InstructedStep): string {
  const quoted = step.fenced ? `\n\`\`\`\n${step.span}\`\`\`\n` : `\`${step.span}\``;
  return `run ${quoted} with ${displayName(step.tool)}`;
}

/** The request with its quoted spans shown in plain quotes (first line only), so it is not re-run. */
function unquoted(text: string): string {
  return text.replace(QUOTED_SPANS, (_m, fenced?: string, inline?: string) => `"${firstLine(fenced ?? inline ?? '')}"`);
}

/** Words the summary keeps of the request: a summary condenses, it does not copy the request over. */
const GOAL_WORDS = 30;

function condensed(text: string): string {
  const words = text.split(/\s+/).filter((w) => w !== '');
  return words.length > GOAL_WORDS ? `${words.slice(0, GOAL_WORDS).join(' ')} …` : words.join(' ');
}

function firstLine(text: string): string {
  return text.split('\n')[0];
}
