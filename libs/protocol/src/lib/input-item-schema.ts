import { z } from 'zod';
import { knownTypes, optionalField, tolerantUnion } from './field-schemas';

// Inbound schemas are loose objects: fields we do not model (`caller`,
// `prompt_cache_breakpoint`, …) are kept, so stored and replayed items round-trip intact.
// Optional fields read `undefined` whether the client omitted them or sent `null`.

/** Item status as clients echo it back. */
const ItemStatusSchema = z.enum(['in_progress', 'completed', 'incomplete']);

/** `{type:"input_text", text}`. */
export const InputTextPartSchema = z.looseObject({ type: z.literal('input_text'), text: z.string() });

/** `{type:"output_text", text, annotations?}`: assistant text replayed as history. */
export const OutputTextPartSchema = z.looseObject({
  type: z.literal('output_text'),
  text: z.string(),
  annotations: z.array(z.unknown()).optional(),
});

/** `{type:"input_image", image_url? | file_id?, detail?}`. */
export const InputImagePartSchema = z.looseObject({
  type: z.literal('input_image'),
  image_url: optionalField(z.string()),
  file_id: optionalField(z.string()),
  detail: optionalField(z.string()),
});

/** `{type:"refusal", refusal}`: an assistant refusal replayed as history. */
export const RefusalPartSchema = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });

/** `{type:"input_file", file_data? | file_id? | file_url?, filename?}`. */
export const InputFilePartSchema = z.looseObject({
  type: z.literal('input_file'),
  file_data: optionalField(z.string()),
  file_id: optionalField(z.string()),
  file_url: optionalField(z.string()),
  filename: optionalField(z.string()),
  detail: optionalField(z.string()),
});

/** A message content part; unknown part types (`input_audio`, …) are carried along. */
export const ContentPartSchema = tolerantUnion([
  InputTextPartSchema,
  OutputTextPartSchema,
  InputImagePartSchema,
  RefusalPartSchema,
  InputFilePartSchema,
]);
/** A message content part as parsed. */
export type ContentPart = z.infer<typeof ContentPartSchema>;

/** A message: `content` is a string or a list of parts. */
export const MessageItemSchema = z.looseObject({
  type: z.literal('message'),
  role: z.enum(['user', 'system', 'developer', 'assistant']),
  content: z.union([z.string(), z.array(ContentPartSchema)]),
  id: optionalField(z.string()),
  status: optionalField(ItemStatusSchema),
  /** `commentary` | `final_answer` on assistant messages; kept as a string to read loosely. */
  phase: optionalField(z.string()),
});
/** A message input item. `type` is always set after parsing, even if the client omitted it. */
export type MessageItem = z.infer<typeof MessageItemSchema>;

/** A tool call the model made earlier, replayed by the client. `arguments` is a JSON string. */
export const FunctionCallItemSchema = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  /** Set when the tool lives inside a `namespace` tool. */
  namespace: optionalField(z.string()),
  id: optionalField(z.string()),
  status: optionalField(ItemStatusSchema),
});
/** A `function_call` input item. */
export type FunctionCallItem = z.infer<typeof FunctionCallItemSchema>;

/** Without a call id a tool output must name its tool; otherwise `call_id` is what is missing. */
function callIdOrName(ctx: { value: { call_id?: string; name?: string }; issues: z.core.$ZodRawIssue[] }): void {
  if (ctx.value.call_id === undefined && ctx.value.name === undefined) {
    ctx.issues.push({ code: 'invalid_type', expected: 'string', path: ['call_id'], input: undefined });
  }
}

/** A tool's result item of `type`: the same shape for function and custom tools. */
function toolOutputItemSchema<T extends 'function_call_output' | 'custom_tool_call_output'>(type: T) {
  return z
    .looseObject({
      type: z.literal(type),
      call_id: optionalField(z.string()),
      name: optionalField(z.string()),
      namespace: optionalField(z.string()),
      output: z.union([z.string(), z.array(ContentPartSchema)]),
      id: optionalField(z.string()),
      status: optionalField(ItemStatusSchema),
    })
    .check(callIdOrName);
}

/**
 * The result of a tool call: a string or a list of parts (`input_text`, `input_image`, …).
 * `call_id` is optional because coding agents (Codex CLI) send outputs that name the tool by
 * `name`/`namespace` instead; the edge pairs those with the latest call of that tool.
 */
export const FunctionCallOutputItemSchema = toolOutputItemSchema('function_call_output');
/** A `function_call_output` input item. */
export type FunctionCallOutputItem = z.infer<typeof FunctionCallOutputItemSchema>;

/** A call to a `custom` (freeform) tool, e.g. Codex's `apply_patch`: `input` is plain text. */
export const CustomToolCallItemSchema = z.looseObject({
  type: z.literal('custom_tool_call'),
  call_id: z.string(),
  name: z.string(),
  input: z.string(),
  namespace: optionalField(z.string()),
  id: optionalField(z.string()),
  status: optionalField(ItemStatusSchema),
});
/** A `custom_tool_call` input item. */
export type CustomToolCallItem = z.infer<typeof CustomToolCallItemSchema>;

/** The result of a custom tool call: a string or a list of parts; like a function call's, by `call_id` or by `name`. */
export const CustomToolCallOutputItemSchema = toolOutputItemSchema('custom_tool_call_output');
/** A `custom_tool_call_output` input item. */
export type CustomToolCallOutputItem = z.infer<typeof CustomToolCallOutputItemSchema>;

/** A call to the `local_shell` tool: `action.command` is the argv to run. */
export const LocalShellCallItemSchema = z.looseObject({
  type: z.literal('local_shell_call'),
  call_id: z.string(),
  action: z.looseObject({
    type: z.literal('exec'),
    command: z.array(z.string()),
    env: optionalField(z.record(z.string(), z.string())),
    timeout_ms: optionalField(z.number()),
    user: optionalField(z.string()),
    working_directory: optionalField(z.string()),
  }),
  id: optionalField(z.string()),
  status: optionalField(ItemStatusSchema),
});
/** A `local_shell_call` input item. */
export type LocalShellCallItem = z.infer<typeof LocalShellCallItemSchema>;

/** The output of a `local_shell` call; `id` names the call (its `call_id` or item id). */
export const LocalShellCallOutputItemSchema = z.looseObject({
  type: z.literal('local_shell_call_output'),
  id: z.string(),
  output: z.string(),
  status: optionalField(ItemStatusSchema),
});
/** A `local_shell_call_output` input item. */
export type LocalShellCallOutputItem = z.infer<typeof LocalShellCallOutputItemSchema>;

/** Reasoning the model produced earlier; `encrypted_content` is opaque and passed back as-is. */
export const ReasoningItemSchema = z.looseObject({
  type: z.literal('reasoning'),
  id: optionalField(z.string()),
  summary: z.array(z.looseObject({ type: z.literal('summary_text'), text: z.string() })),
  content: optionalField(z.array(z.looseObject({ type: z.literal('reasoning_text'), text: z.string() }))),
  encrypted_content: optionalField(z.string()),
  status: optionalField(ItemStatusSchema),
});
/** A `reasoning` input item. */
export type ReasoningItem = z.infer<typeof ReasoningItemSchema>;

/**
 * A compaction (from `POST /v1/responses/compact` or in-line compaction): the conversation before
 * it, summarised by the model and sealed for the caller's organization. Sent back as the start of a
 * new window; the model reads what it seals.
 */
export const CompactionItemSchema = z.looseObject({
  type: z.literal('compaction'),
  id: optionalField(z.string()),
  encrypted_content: z.string(),
  created_by: optionalField(z.string()),
});
/** A `compaction` input item. */
export type CompactionItem = z.infer<typeof CompactionItemSchema>;

/** A pointer to an item of a stored response, by id. */
export const ItemReferenceSchema = z.looseObject({ type: z.literal('item_reference'), id: z.string() });
/** An `item_reference` input item. */
export type ItemReference = z.infer<typeof ItemReferenceSchema>;

const KNOWN_ITEM_OPTIONS = [
  MessageItemSchema,
  FunctionCallItemSchema,
  FunctionCallOutputItemSchema,
  CustomToolCallItemSchema,
  CustomToolCallOutputItemSchema,
  LocalShellCallItemSchema,
  LocalShellCallOutputItemSchema,
  ReasoningItemSchema,
  CompactionItemSchema,
  ItemReferenceSchema,
] as const;
const KNOWN_ITEM_TYPES = knownTypes(KNOWN_ITEM_OPTIONS);

/**
 * The SDK lets `type` be omitted on "easy" messages (`{role, content}`) and on item
 * references (`{id}`); fill it in so the union can discriminate and callers never see it unset.
 */
function withItemType(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const item = value as Record<string, unknown>;
  if (item['type'] !== undefined && item['type'] !== null) return value;
  if ('role' in item) return { ...item, type: 'message' };
  if ('id' in item) return { ...item, type: 'item_reference' };
  return value;
}

/**
 * One input item. Known types are validated strictly enough to use; other types
 * (hosted-tool calls, `compaction`, …) are accepted and carried along.
 */
export const InputItemSchema = z.preprocess(
  withItemType,
  // Every Responses item's `id` is a string, carried ones included: lookups by id (item
  // references, input_items pagination) can rely on it.
  tolerantUnion(KNOWN_ITEM_OPTIONS, { id: optionalField(z.string()) }),
);
/** An input item as parsed: a known item, or an item of another type carried as-is. */
export type InputItem = z.infer<typeof InputItemSchema>;
/** The input items fastloop understands. */
export type KnownInputItem = z.infer<(typeof KNOWN_ITEM_OPTIONS)[number]>;
/**
 * An input item of a type fastloop does not model (hosted-tool items such as `web_search_call`,
 * `mcp_call`, `computer_call`, and types newer than this code): carried, stored and scanned.
 */
export type CarriedInputItem = Exclude<InputItem, KnownInputItem>;

/**
 * Narrows an item to the types fastloop understands. Needed because a carried item's `type`
 * is any string, so `switch (item.type)` alone cannot exclude it.
 */
export function isKnownInputItem(item: InputItem): item is KnownInputItem {
  return KNOWN_ITEM_TYPES.has(item.type);
}
