/**
 * fast-check generators shared by this library's specs (not exported from the package).
 */
import fc from 'fast-check';
import type { JsonSchema } from '../json-schema';
import type { ConversationEntry, FreeformFormat, RenderHeader, ToolSpec } from '../model-profile';

/** Text that stresses tokenization: any code point, emoji/CJK graphemes, and special-token text. */
export const anyText = (): fc.Arbitrary<string> =>
  fc
    .array(
      fc.oneof(
        fc.string({ unit: 'binary', maxLength: 12 }),
        fc.string({ unit: 'grapheme', maxLength: 6 }),
        fc.constantFrom(
          '<|end|>',
          '<|start|>',
          '<|message|>',
          '<|channel|>',
          '<|call|>',
          '<|return|>',
          ' to=functions.x',
          '日本語',
          '👩‍👩‍👧',
          'é',
          '\n\n',
        ),
      ),
      { maxLength: 6 },
    )
    .map((parts) => parts.join(''));

/** Identifiers as OpenAI allows them in tool names (`^[a-zA-Z0-9_-]+$`), starting with a letter. */
export const toolName = (): fc.Arbitrary<string> => fc.stringMatching(/^[a-z][a-zA-Z0-9_-]{0,15}$/);

export const namespaceName = (): fc.Arbitrary<string> =>
  fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/).filter((n) => n !== 'functions');

/** One line of description text (the renderer splits descriptions into `// ` lines). */
const descriptionLine = (): fc.Arbitrary<string> =>
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).filter((s) => !/[\r\n]/.test(s));

const propertyKey = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,10}$/),
    fc.constantFrom('with space', 'kebab-key', '"quoted"', '__proto__'),
  );

/**
 * JSON schemas in the canonical form `typeScriptToSchema` returns, so a round trip can be compared
 * with `toEqual`: primitives, nullable primitives as `type` lists, string enums, arrays, objects.
 */
export const canonicalSchema = (depth = 2): fc.Arbitrary<JsonSchema> => {
  const primitive = fc.constantFrom<JsonSchema>({ type: 'string' }, { type: 'number' }, { type: 'boolean' });
  const nullable = fc.constantFrom<JsonSchema>({ type: ['string', 'null'] }, { type: ['number', 'null'] });
  const enumeration = fc
    .uniqueArray(fc.string({ unit: 'grapheme', maxLength: 8 }), { minLength: 1, maxLength: 4 })
    .map((values): JsonSchema => ({ type: 'string', enum: values }));
  const leaf = fc.oneof(primitive, nullable, enumeration);
  if (depth <= 0) return leaf;
  const inner = canonicalSchema(depth - 1);
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    { weight: 1, arbitrary: inner.map((items): JsonSchema => ({ type: 'array', items })) },
    { weight: 1, arbitrary: objectSchema(inner) },
  );
};

/** An object schema whose properties come from `values`, with descriptions and required keys. */
export const objectSchema = (values: fc.Arbitrary<JsonSchema>): fc.Arbitrary<JsonSchema> =>
  fc
    .uniqueArray(
      fc.tuple(
        propertyKey(),
        values,
        fc.option(fc.array(descriptionLine(), { minLength: 1, maxLength: 2 }), { nil: undefined }),
        fc.boolean(),
      ),
      {
        maxLength: 5,
        selector: ([key]) => key,
      },
    )
    .map((props): JsonSchema => {
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      for (const [key, value, description, isRequired] of props) {
        const schema = description ? { ...value, description: description.join('\n') } : value;
        Object.defineProperty(properties, key, { value: schema, enumerable: true, writable: true, configurable: true });
        if (isRequired) required.push(key);
      }
      return required.length > 0 ? { type: 'object', properties, required } : { type: 'object', properties };
    });

/** A custom tool's input format: free text, or a grammar whose definition is any text. */
export const freeformFormat = (): fc.Arbitrary<FreeformFormat> =>
  fc.oneof(
    fc.constant<FreeformFormat>({ type: 'text' }),
    fc
      .tuple(fc.constantFrom('lark', 'regex'), anyText())
      .map(([syntax, definition]): FreeformFormat => ({ type: 'grammar', syntax, definition })),
  );

const toolDescription = (): fc.Arbitrary<string> =>
  fc.array(descriptionLine(), { minLength: 1, maxLength: 2 }).map((lines) => lines.join('\n'));

const functionToolSpec = (): fc.Arbitrary<ToolSpec> =>
  fc.record(
    {
      name: toolName(),
      description: toolDescription(),
      parameters: objectSchema(canonicalSchema(1)),
      namespace: namespaceName(),
    },
    { requiredKeys: ['name'] },
  );

const customToolSpec = (): fc.Arbitrary<ToolSpec> =>
  fc.record(
    { name: toolName(), description: toolDescription(), namespace: namespaceName(), freeform: freeformFormat() },
    { requiredKeys: ['name', 'freeform'] },
  );

/** A function tool or, one time in four, a custom (freeform) tool. */
export const toolSpec = (): fc.Arbitrary<ToolSpec> =>
  fc.oneof({ weight: 3, arbitrary: functionToolSpec() }, { weight: 1, arbitrary: customToolSpec() });

/** Tools with unique (namespace, name) pairs. */
export const toolSpecs = (): fc.Arbitrary<ToolSpec[]> =>
  fc.uniqueArray(toolSpec(), { maxLength: 4, selector: (t) => `${t.namespace ?? 'functions'}.${t.name}` });

export const renderHeader = (): fc.Arbitrary<RenderHeader> =>
  fc.record(
    {
      instructions: anyText(),
      tools: toolSpecs(),
      reasoningEffort: fc.constantFrom('low' as const, 'medium' as const, 'high' as const),
    },
    { requiredKeys: ['tools'] },
  );

const optionalNamespace = () => fc.option(namespaceName(), { nil: undefined });

const withNamespace = <T extends object>(entry: T, namespace: string | undefined): T =>
  namespace === undefined ? entry : { ...entry, namespace };

export const assistantEntry = (): fc.Arbitrary<ConversationEntry> =>
  fc.oneof(
    anyText().map((text): ConversationEntry => ({ kind: 'message', role: 'assistant', text })),
    anyText().map((text): ConversationEntry => ({ kind: 'reasoning', text })),
    fc
      .tuple(toolName(), optionalNamespace(), anyText())
      .map(([name, namespace, args]): ConversationEntry =>
        withNamespace({ kind: 'function_call', name, arguments: args, callId: 'call_1' }, namespace),
      ),
    fc
      .tuple(toolName(), optionalNamespace(), anyText())
      .map(([name, namespace, input]): ConversationEntry =>
        withNamespace({ kind: 'custom_tool_call', name, input, callId: 'call_1' }, namespace),
      ),
  );

export const conversationEntry = (): fc.Arbitrary<ConversationEntry> =>
  fc.oneof(
    assistantEntry(),
    fc
      .tuple(fc.constantFrom('system' as const, 'developer' as const, 'user' as const), anyText())
      .map(([role, text]): ConversationEntry => ({ kind: 'message', role, text })),
    fc
      .tuple(toolName(), optionalNamespace(), anyText())
      .map(([name, namespace, output]): ConversationEntry =>
        withNamespace({ kind: 'function_call_output', name, output, callId: 'call_1' }, namespace),
      ),
  );

/** Splits `tokens` into consecutive chunks of the given sizes (the rest goes in the last chunk). */
export function chunk<T>(tokens: readonly T[], sizes: readonly number[]): T[][] {
  const chunks: T[][] = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= tokens.length) break;
    chunks.push(tokens.slice(at, at + size));
    at += size;
  }
  if (at < tokens.length) chunks.push(tokens.slice(at));
  return chunks;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** `String.prototype.isWellFormed` without the ES2024 lib: no lone surrogate, i.e. no split character. */
export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}
