import type { JsonSchema, ParsedPrompt } from '@fastloop/model-profiles';

/** What sampling must produce, read from the prompt's header. */
export type Constraint = { kind: 'tool_call'; schema: JsonSchema } | { kind: 'json'; schema: JsonSchema };

/**
 * The constraint a prompt asks for: a forced tool call (tool choice `required` or a named tool) as
 * one JSON object `{"name", "arguments"}` whose arguments follow that tool's schema, or the
 * response format's schema. None when the format carries neither (the model samples freely).
 */
export function constraintFor(parsed: ParsedPrompt): Constraint | undefined {
  const choice = parsed.toolChoice;
  if (choice !== undefined && parsed.tools.length > 0) {
    const tools =
      choice === 'required'
        ? parsed.tools
        : parsed.tools.filter((t) => t.name === choice.name || qualified(t) === choice.name);
    if (tools.length > 0) {
      const calls = tools.map((t) => ({
        type: 'object',
        properties: { name: { const: qualified(t) }, arguments: t.parameters },
        required: ['name', 'arguments'],
        additionalProperties: false,
      })) as JsonSchema[];
      return { kind: 'tool_call', schema: calls.length === 1 ? calls[0] : ({ oneOf: calls } as JsonSchema) };
    }
  }
  if (parsed.responseFormat) return { kind: 'json', schema: parsed.responseFormat.schema };
  return undefined;
}

function qualified(t: ParsedPrompt['tools'][number]): string {
  return t.namespace === 'functions' ? t.name : `${t.namespace}.${t.name}`;
}

/**
 * GBNF for the constraint, from node-llama-cpp's JSON-schema grammar (`jsonGrammar`): a tool call
 * is wrapped in the Hermes tags the output parser reads. node-llama-cpp ends its JSON root with
 * newlines to let a chat model stop; here the end of the grammar is the end (EOS is then the only
 * token the sampler allows), so they are cut.
 */
export function constraintGbnf(constraint: Constraint, jsonGrammar: string): string {
  const lines = jsonGrammar.split('\n');
  const rootIndex = lines.findIndex((l) => l.startsWith('root ::='));
  if (rootIndex < 0) throw new Error('JSON-schema grammar has no root rule');
  const body = lines[rootIndex].slice('root ::='.length).replace(/\s*"(\\n)+"\s*\[\\n\]\*\s*$/, '');
  lines[rootIndex] = `json-value-root ::=${body}`;
  // node-llama-cpp lets an integer carry any exponent, and 8e-4 is not an integer: no exponent here.
  const integer = lines.findIndex((l) => l.startsWith('integer-number-rule ::='));
  if (integer >= 0) lines[integer] = 'integer-number-rule ::= "-"? ("0" | [1-9] [0-9]{0,15})';
  const root =
    constraint.kind === 'tool_call'
      ? 'root ::= "<tool_call>\\n" json-value-root "\\n</tool_call>"'
      : 'root ::= json-value-root';
  return [root, ...lines].join('\n');
}
