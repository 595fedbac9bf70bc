import type {
  ConversationEntry,
  JsonSchema,
  ParsedPrompt,
  ParsedPromptMessage,
  ParsedTool,
} from '@fastloop/model-profiles';
import { argumentsForSchema } from '../../schema-arguments';
import { freeformInput } from './sim-freeform-input';
import { asksForHandoff, handoffSummary } from './sim-handoff';
import { instructedCalls } from './sim-instructions';
import { createRandom, hashString, pickIndex } from '@fastloop/service-kit';

/**
 * The simulated accelerator's "model": a deterministic agent script driven by the conversation.
 * After a user message it calls tools (when offered) `toolCalls` times, then answers; asked for a
 * handoff summary (compaction), it writes one derived from the conversation. The same
 * conversation always yields the same completion, so benchmarks and tests are reproducible.
 */
export interface SimScriptOptions {
  /** Tool calls made after a user message before answering (SIM_TOOL_CALLS, default 2). */
  toolCalls: number;
  /** Words in a final answer (SIM_ANSWER_WORDS, default 40). */
  answerWords: number;
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant']);

/** Filler words for answers, mixed with the user's own words. */
const FILLER = [
  'the',
  'result',
  'shows',
  'that',
  'this',
  'is',
  'simulated',
  'output',
  'with',
  'a',
  'clear',
  'summary',
  'of',
  'findings',
  'and',
  'next',
  'steps',
  'for',
  'your',
  'request',
  'based',
  'on',
  'available',
  'data',
];

/** Where the conversation stands since the last user message. */
interface TurnState {
  userText: string;
  /** Tools called since the last user message, in order, as `name` or `namespace.name`. */
  called: string[];
  last: ParsedPromptMessage | undefined;
}

/**
 * Decides what the simulated model samples next: a tool call (function or custom) or a final
 * assistant message. A forced tool choice (`required`, a named tool) makes it call a tool on every
 * turn, as a constrained model must; a response format makes its answer JSON valid against it.
 */
export function scriptCompletion(parsed: ParsedPrompt, options: SimScriptOptions): ConversationEntry {
  const state = turnState(parsed.messages);
  const forced = forcedTools(parsed);
  if (forced) return instructedCalls(forced, state.userText)?.[state.called.length] ?? toolCall(forced, state);
  const lastIsUser = state.last?.author === 'user';
  const lastIsToolOutput = state.last !== undefined && isToolOutput(state.last);
  // Asked for a handoff summary (compaction), it writes one instead of working on (see sim-handoff).
  if (lastIsUser && asksForHandoff(state.userText))
    return { kind: 'message', role: 'assistant', text: handoffSummary(parsed.messages, parsed.tools) };
  // A user who names a tool and quotes what to run gets exactly those calls (see sim-instructions).
  const instructed = instructedCalls(parsed.tools, state.userText);
  const limit = instructed ? Math.min(instructed.length, options.toolCalls) : options.toolCalls;
  const wantsTool = parsed.tools.length > 0 && state.called.length < limit && (lastIsUser || lastIsToolOutput);
  if (wantsTool) return instructed ? instructed[state.called.length] : toolCall(parsed.tools, state);
  const text = parsed.responseFormat
    ? jsonAnswer(parsed.responseFormat.schema, state, options.answerWords)
    : answerText(state, options.answerWords);
  return { kind: 'message', role: 'assistant', text };
}

/** The tools a forced tool choice allows (`name` or `namespace.name`); undefined when the model may answer in text. */
function forcedTools(parsed: ParsedPrompt): ParsedTool[] | undefined {
  const choice = parsed.toolChoice;
  if (choice === undefined || parsed.tools.length === 0) return undefined;
  if (choice === 'required') return [...parsed.tools];
  const named = parsed.tools.filter((t) => t.name === choice.name || `${t.namespace}.${t.name}` === choice.name);
  return named.length > 0 ? named : undefined;
}

/**
 * An answer valid against `schema`: generated from it, seeded by the conversation. A schema that
 * names no properties (`json_object`) gets the prose answer as `{"answer": …}`.
 */
function jsonAnswer(schema: JsonSchema, state: TurnState, words: number): string {
  const open = schema.type === 'object' && schema.properties === undefined && schema.additionalProperties !== false;
  if (open) return JSON.stringify({ answer: answerText(state, words) });
  return JSON.stringify(
    argumentsForSchema(schema, {
      seed: hashString(state.userText, hashString(state.called.join(','))),
      text: state.userText,
    }),
  );
}

function turnState(messages: readonly ParsedPromptMessage[]): TurnState {
  let userIndex = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].author === 'user') {
      userIndex = i;
      break;
    }
  }
  const called: string[] = [];
  for (let i = userIndex + 1; i < messages.length; i++) {
    const m = messages[i];
    if (m.author === 'assistant' && m.recipient !== undefined && m.recipient !== 'assistant')
      called.push(displayName(m.recipient));
  }
  return { userText: userIndex >= 0 ? messages[userIndex].content : '', called, last: messages[messages.length - 1] };
}

/** A tool output's author is the tool: `functions.x` or `<namespace>.x`. */
function isToolOutput(m: ParsedPromptMessage): boolean {
  return !ROLES.has(m.author) && m.author.includes('.');
}

/** `functions.get_weather` → `get_weather`; other namespaces keep their prefix. */
function displayName(recipient: string): string {
  return recipient.startsWith('functions.') ? recipient.slice('functions.'.length) : recipient;
}

function toolCall(tools: readonly ParsedTool[], state: TurnState): ConversationEntry {
  const callIndex = state.called.length;
  const base = hashString(state.userText);
  // Hash of the user text picks the first tool; each further call moves on to "another" tool.
  const tool = tools[(base + callIndex) % tools.length];
  const seed = hashString(`${tool.namespace}.${tool.name}#${callIndex}`, base);
  const namespace = tool.namespace !== 'functions' ? { namespace: tool.namespace } : {};
  const callId = `call_sim_${seed.toString(16).padStart(8, '0')}`;
  if (tool.freeform) {
    const input = freeformInput(tool.name, tool.freeform, { seed, text: state.userText });
    return { kind: 'custom_tool_call', name: tool.name, ...namespace, input, callId };
  }
  const args = argumentsForSchema(tool.parameters, { seed, text: state.userText });
  return { kind: 'function_call', name: tool.name, ...namespace, arguments: JSON.stringify(args), callId };
}

/**
 * Exactly `words` words: a lead-in naming the tools used (or quoting the request), then filler
 * drawn from the user's words and a fixed list.
 */
export function answerText(state: Pick<TurnState, 'userText' | 'called'>, words: number): string {
  const userWords = state.userText.match(/[\p{L}\p{N}']+/gu) ?? [];
  const lead =
    state.called.length > 0
      ? ['Simulated', 'answer', 'after', 'calling', ...joinNames(state.called), 'for', 'your', 'request']
      : ['Simulated', 'answer', 'to', ...(userWords.length > 0 ? userWords.slice(0, 6) : ['your', 'message'])];
  lead[lead.length - 1] += ':';
  const random = createRandom(hashString(state.userText, hashString(state.called.join(','))));
  const pool = [...FILLER, ...userWords.map((w) => w.toLowerCase())];
  const out = lead.slice(0, words);
  while (out.length < words) out.push(pool[pickIndex(random, pool.length)]);
  return `${out.join(' ')}.`;
}

/** ['a'] → ['a']; ['a','b'] → ['a','and','b']; ['a','b','c'] → ['a,','b','and','c']. */
function joinNames(names: readonly string[]): string[] {
  if (names.length <= 1) return [...names];
  return [...names.slice(0, -1).map((n, i) => (i < names.length - 2 ? `${n},` : n)), 'and', names[names.length - 1]];
}
