import type { JsonSchema, ModelProfile, ParsedPrompt } from '@fastloop/model-profiles';
import type { RequestConstraints } from '../../request-constraints';
import { alt, lit, ref, seq, toGbnf, type GNode, type Grammar } from './gbnf';
import { JsonSchemaGrammar } from './json-schema-grammar';

/** A tool a forced call may go to: its qualified name (`ns.name` outside `functions`) and schema. */
export interface CallableTool {
  name: string;
  parameters: JsonSchema;
}

/** What sampling must produce, read from the prompt's header (or the request's constraints). */
export type Constraint = { kind: 'tool_call'; tools: CallableTool[] } | { kind: 'json'; schema: JsonSchema };

/**
 * The constraint a prompt asks for: a forced tool call (tool choice `required` or a named tool)
 * to one of the tools it offers, or the response format's schema. The prompt's own header wins;
 * `request` fills in what a chat format does not write (harmony carries neither in its text).
 * None when nothing is forced (the model samples freely).
 */
export function constraintFor(parsed: ParsedPrompt, request?: RequestConstraints): Constraint | undefined {
  const choice = parsed.toolChoice ?? request?.toolChoice;
  if (choice !== undefined && parsed.tools.length > 0) {
    const tools =
      choice === 'required'
        ? parsed.tools
        : parsed.tools.filter((t) => t.name === choice.name || qualified(t) === choice.name);
    if (tools.length > 0)
      return { kind: 'tool_call', tools: tools.map((t) => ({ name: qualified(t), parameters: t.parameters })) };
  }
  const format = parsed.responseFormat ?? request?.responseFormat;
  if (format) return { kind: 'json', schema: format.schema };
  return undefined;
}

function qualified(t: ParsedPrompt['tools'][number]): string {
  return t.namespace === 'functions' ? t.name : `${t.namespace}.${t.name}`;
}

/**
 * How the chat template writes a tool call, split around the call's name and arguments: what is
 * sampled under the grammar is then exactly what the template renders for that call in the next
 * turn's prompt (key order, spacing, wrapper), so the sampled call's KV is that prompt's prefix.
 */
export interface ToolCallWrapper {
  /** Text before the JSON-quoted name (`<tool_call>\n{"name": `). */
  readonly beforeName: string;
  /** Text between the name and the arguments (`, "arguments": `). */
  readonly beforeArguments: string;
  /** Text after the arguments, up to the turn's end marker (`}\n</tool_call>\n`). */
  readonly afterArguments: string;
}

/** Hermes (our default template, Qwen's, Hermes'): what the output parser reads. */
export const HERMES_WRAPPER: ToolCallWrapper = {
  beforeName: '<tool_call>\n{"name": ',
  beforeArguments: ', "arguments": ',
  afterArguments: '}\n</tool_call>\n',
};

const NAME_PROBE = 'fastloop_probe_name';
const ARGUMENTS_PROBE = '{"fastloop_probe_argument":0}';

/**
 * Reads the wrapper off the profile's own rendering of a probe call (its tokens decoded); a
 * template that does not write a call's name and arguments verbatim gets {@link HERMES_WRAPPER}.
 */
export function toolCallWrapperOf(
  profile: Pick<ModelProfile, 'renderCompletion' | 'decode'>,
  endMarkers: readonly string[],
): ToolCallWrapper {
  let text: string;
  try {
    text = profile.decode(
      profile.renderCompletion({
        kind: 'function_call',
        name: NAME_PROBE,
        arguments: ARGUMENTS_PROBE,
        callId: 'call_probe',
      }),
    );
  } catch {
    return HERMES_WRAPPER;
  }
  const name = text.indexOf(JSON.stringify(NAME_PROBE));
  const args = text.indexOf(ARGUMENTS_PROBE, name);
  if (name < 0 || args < 0) return HERMES_WRAPPER;
  const afterArgs = args + ARGUMENTS_PROBE.length;
  const ends = endMarkers.map((m) => text.indexOf(m, afterArgs)).filter((i) => i >= 0);
  const end = ends.length > 0 ? Math.min(...ends) : text.length;
  return {
    beforeName: text.slice(0, name),
    beforeArguments: text.slice(name + JSON.stringify(NAME_PROBE).length, args),
    afterArguments: text.slice(afterArgs, end),
  };
}

/** Where the engine takes over from the grammar (see call-framing.ts). */
export interface GrammarFraming {
  /** Text the engine evaluates before sampling starts: the grammar begins after it. */
  forcedText: string;
  /** The engine appends what follows the arguments: the grammar ends with them. */
  tailAppended: boolean;
}

/**
 * The grammar for a constraint: a tool call is the wrapper around one offered tool's name and
 * arguments that satisfy its schema; a response format is one value that satisfies its schema.
 * With `framing`, the call's start and end are the engine's, and the grammar covers the rest.
 * Throws `UnsatisfiableSchemaError` for a schema nothing satisfies.
 */
export function constraintGrammar(
  constraint: Constraint,
  wrapper: ToolCallWrapper = HERMES_WRAPPER,
  framing?: GrammarFraming,
): Grammar {
  const rules = new Map<string, GNode>();
  rules.set('root', lit('')); // first in the map, so printed first
  if (constraint.kind === 'json') {
    rules.set('root', new JsonSchemaGrammar(rules, 'r-', constraint.schema).rootValue());
    return { rules };
  }
  const skip = framing?.forcedText.length ?? 0;
  const calls = constraint.tools.map((tool, i) => {
    const args = new JsonSchemaGrammar(rules, `t${i}-`, tool.parameters).rootValue();
    const argsRule = `t${i}-arguments`;
    rules.set(argsRule, args);
    const head = `${wrapper.beforeName}${JSON.stringify(tool.name)}${wrapper.beforeArguments}`;
    if (!head.startsWith(framing?.forcedText ?? '')) throw new Error('the forced text does not start every call');
    return seq(lit(head.slice(skip)), ref(argsRule));
  });
  rules.set('root', seq(alt(...calls), lit(framing?.tailAppended ? '' : wrapper.afterArguments)));
  return { rules };
}

/** {@link constraintGrammar} printed as GBNF for llama.cpp. */
export function constraintGbnf(constraint: Constraint, wrapper?: ToolCallWrapper, framing?: GrammarFraming): string {
  return toGbnf(constraintGrammar(constraint, wrapper, framing));
}
