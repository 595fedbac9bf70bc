import { z } from 'zod';
import { ResponseErrorSchema } from './error-schemas';
import { ToolChoiceSchema, ToolSchema } from './tool-schema';
import { ContentPartSchema } from './input-item-schema';
import {
  ReasoningEffortSchema,
  ReasoningSummarySchema,
  TextFormatSchema,
  VerbositySchema,
} from './response-create-request-schema';

// Outbound schemas are strict: they define the closed types our builders produce, and tests
// (or fakes) can parse what we send with them to catch a stray or missing field.

/** Lifecycle state of a Response. */
export const ResponseStatusSchema = z.enum(['completed', 'failed', 'in_progress', 'cancelled', 'queued', 'incomplete']);
/** A Response's `status`. */
export type ResponseStatus = z.infer<typeof ResponseStatusSchema>;

/** Lifecycle state of an output item. */
export const OutputItemStatusSchema = z.enum(['in_progress', 'completed', 'incomplete']);
/** An output item's `status`. */
export type OutputItemStatus = z.infer<typeof OutputItemStatusSchema>;

/** Assistant text. fastloop sends no annotations or logprobs, but the arrays are always present. */
export const OutputTextSchema = z.strictObject({
  type: z.literal('output_text'),
  text: z.string(),
  annotations: z.array(z.never()),
  logprobs: z.array(z.never()),
});
/** An `output_text` content part. */
export type OutputText = z.infer<typeof OutputTextSchema>;

/** Raw reasoning text, for models whose reasoning is visible. */
export const ReasoningTextSchema = z.strictObject({ type: z.literal('reasoning_text'), text: z.string() });
/** A `reasoning_text` content part. */
export type ReasoningText = z.infer<typeof ReasoningTextSchema>;

/** An assistant message (`msg_…`). */
export const OutputMessageSchema = z.strictObject({
  id: z.string(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  status: OutputItemStatusSchema,
  content: z.array(OutputTextSchema),
});
/** An output `message` item. */
export type OutputMessage = z.infer<typeof OutputMessageSchema>;

/** A tool call (`fc_…`, with `call_…` as the id the client answers with). */
export const OutputFunctionCallSchema = z.strictObject({
  id: z.string(),
  type: z.literal('function_call'),
  status: OutputItemStatusSchema,
  call_id: z.string(),
  name: z.string(),
  /** JSON text, streamed as deltas; `""` until the first delta. */
  arguments: z.string(),
  /** Present only for tools declared inside a `namespace` tool. */
  namespace: z.string().optional(),
});
/** An output `function_call` item. */
export type OutputFunctionCall = z.infer<typeof OutputFunctionCallSchema>;

/** A call to a custom (freeform) tool (`ctc_…`): `input` is plain text, streamed as deltas. */
export const OutputCustomToolCallSchema = z.strictObject({
  id: z.string(),
  type: z.literal('custom_tool_call'),
  status: OutputItemStatusSchema,
  call_id: z.string(),
  name: z.string(),
  /** `""` until the first delta. */
  input: z.string(),
  /** Present only for tools declared inside a `namespace` tool. */
  namespace: z.string().optional(),
});
/** An output `custom_tool_call` item. */
export type OutputCustomToolCall = z.infer<typeof OutputCustomToolCallSchema>;

/** What a `local_shell_call` runs: argv, environment and optional limits. */
export const LocalShellActionSchema = z.strictObject({
  type: z.literal('exec'),
  command: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  timeout_ms: z.number().optional(),
  user: z.string().optional(),
  working_directory: z.string().optional(),
});
/** A `local_shell_call`'s action. */
export type LocalShellAction = z.infer<typeof LocalShellActionSchema>;

/** A call to the `local_shell` tool (`lsh_…`); the client runs `action` and answers with `call_id`. */
export const OutputLocalShellCallSchema = z.strictObject({
  id: z.string(),
  type: z.literal('local_shell_call'),
  status: OutputItemStatusSchema,
  call_id: z.string(),
  action: LocalShellActionSchema,
});
/** An output `local_shell_call` item. */
export type OutputLocalShellCall = z.infer<typeof OutputLocalShellCallSchema>;

/** Reasoning (`rs_…`). `encrypted_content` only when the client asked for it via `include`. */
export const OutputReasoningSchema = z.strictObject({
  id: z.string(),
  type: z.literal('reasoning'),
  summary: z.array(z.strictObject({ type: z.literal('summary_text'), text: z.string() })),
  content: z.array(ReasoningTextSchema).optional(),
  encrypted_content: z.string().optional(),
});
/** An output `reasoning` item. */
export type OutputReasoning = z.infer<typeof OutputReasoningSchema>;

/** A compaction (`cmp_…`): the conversation before it, summarised and sealed for the caller's organization. */
export const OutputCompactionSchema = z.strictObject({
  id: z.string(),
  type: z.literal('compaction'),
  encrypted_content: z.string(),
  created_by: z.string().optional(),
});
/** An output `compaction` item. */
export type OutputCompaction = z.infer<typeof OutputCompactionSchema>;

/** Any item fastloop emits. Closed: the model side produces nothing else. */
export const OutputItemSchema = z.discriminatedUnion('type', [
  OutputMessageSchema,
  OutputFunctionCallSchema,
  OutputCustomToolCallSchema,
  OutputLocalShellCallSchema,
  OutputReasoningSchema,
  OutputCompactionSchema,
]);
/** An output item. */
export type OutputItem = z.infer<typeof OutputItemSchema>;

/**
 * Token accounting. `cached_tokens` must be true: the prompt tokens the worker did not have
 * to prefill. `cache_write_tokens` is optional here but declared required by the SDK's types
 * (6.49), so `createUsage` always fills it in.
 */
export const UsageSchema = z.strictObject({
  input_tokens: z.int(),
  input_tokens_details: z.strictObject({ cached_tokens: z.int(), cache_write_tokens: z.int().optional() }),
  output_tokens: z.int(),
  output_tokens_details: z.strictObject({ reasoning_tokens: z.int() }),
  total_tokens: z.int(),
});
/** A Response's `usage`. */
export type Usage = z.infer<typeof UsageSchema>;

/** The `text` config echoed on a Response, with its defaults filled in. */
export const ResponseTextConfigSchema = z.strictObject({
  format: TextFormatSchema,
  verbosity: VerbositySchema,
});

/** The `reasoning` config echoed on a Response (`null`s when the client set nothing). */
export const ResponseReasoningConfigSchema = z.strictObject({
  effort: ReasoningEffortSchema.nullable(),
  summary: ReasoningSummarySchema.nullable(),
});

/** The Response object, as returned by `POST`/`GET /v1/responses` and carried by lifecycle events. */
export const ResponseObjectSchema = z.strictObject({
  id: z.string(),
  object: z.literal('response'),
  /** Unix seconds. */
  created_at: z.int(),
  /** Unix seconds; null until the response reaches a terminal status. */
  completed_at: z.int().nullable(),
  status: ResponseStatusSchema,
  background: z.boolean(),
  model: z.string(),
  output: z.array(OutputItemSchema),
  error: ResponseErrorSchema.nullable(),
  incomplete_details: z
    .strictObject({ reason: z.enum(['max_output_tokens', 'content_filter', 'interrupted', 'steered']) })
    .nullable(),
  instructions: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  previous_response_id: z.string().nullable(),
  tools: z.array(ToolSchema),
  tool_choice: ToolChoiceSchema,
  parallel_tool_calls: z.boolean(),
  store: z.boolean(),
  temperature: z.number(),
  top_p: z.number(),
  text: ResponseTextConfigSchema,
  reasoning: ResponseReasoningConfigSchema,
  max_output_tokens: z.int().nullable(),
  truncation: z.enum(['auto', 'disabled']),
  usage: UsageSchema.nullable(),
  user: z.string().nullable(),
  safety_identifier: z.string().nullable(),
  prompt_cache_key: z.string().nullable(),
  /** The tier that served the request: fastloop has one, reported as OpenAI's `default`. */
  service_tier: z.enum(['auto', 'default', 'flex', 'scale', 'priority']),
});
/** A Response object. */
export type ResponseObject = z.infer<typeof ResponseObjectSchema>;

/** A user message kept by compaction, its content parts as the client sent them. */
export const CompactedUserMessageSchema = z.strictObject({
  id: z.string(),
  type: z.literal('message'),
  role: z.literal('user'),
  status: z.literal('completed'),
  content: z.array(ContentPartSchema),
});
/** A user message in a `response.compaction` object. */
export type CompactedUserMessage = z.infer<typeof CompactedUserMessageSchema>;

/**
 * The answer of `POST /v1/responses/compact`: the conversation's user messages followed by one
 * `compaction` item, which a later request sends back (without `previous_response_id`) to start a
 * new window; `usage` is the summarising pass's.
 */
export const CompactedResponseSchema = z.strictObject({
  id: z.string(),
  object: z.literal('response.compaction'),
  created_at: z.number(),
  output: z.array(z.union([CompactedUserMessageSchema, OutputCompactionSchema])),
  usage: UsageSchema,
});
/** A `response.compaction` object. */
export type CompactedResponse = z.infer<typeof CompactedResponseSchema>;
