import { z } from 'zod';
import { integerAtLeast, optionalField } from './field-schemas';
import { InputItemSchema } from './input-item-schema';
import { ToolChoiceSchema, ToolSchema } from './tool-schema';

/** OpenAI's metadata bounds: at most 16 pairs, keys ≤ 64 chars, values ≤ 512 chars. */
export const METADATA_LIMITS = { maxPairs: 16, maxKeyLength: 64, maxValueLength: 512 } as const;

/** Free-form string pairs echoed on the Response. Checked by hand for OpenAI-worded errors. */
export const MetadataSchema = z.record(z.string(), z.string()).superRefine((metadata, ctx) => {
  const keys = Object.keys(metadata);
  if (keys.length > METADATA_LIMITS.maxPairs) {
    ctx.addIssue({
      code: 'custom',
      params: { code: 'object_above_max_properties' },
      message: `too many properties. Expected an object with at most ${METADATA_LIMITS.maxPairs} properties, but got an object with ${keys.length} properties instead.`,
    });
    return;
  }
  for (const key of keys) {
    if (key.length > METADATA_LIMITS.maxKeyLength) {
      ctx.addIssue({
        code: 'custom',
        params: { code: 'string_above_max_length' },
        message: `key too long. Expected keys with maximum length ${METADATA_LIMITS.maxKeyLength}, but got a key with length ${key.length} instead.`,
      });
      return;
    }
    const value = metadata[key] as string;
    if (value.length > METADATA_LIMITS.maxValueLength) {
      ctx.addIssue({
        code: 'custom',
        path: [key],
        params: { code: 'string_above_max_length' },
        message: `string too long. Expected a string with maximum length ${METADATA_LIMITS.maxValueLength}, but got a string with length ${value.length} instead.`,
      });
      return;
    }
  }
});

/** How hard a reasoning model thinks; the SDK's full list, so no client value is refused. */
export const ReasoningEffortSchema = z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);
/** `reasoning.effort`. */
export type ReasoningEffort = z.infer<typeof ReasoningEffortSchema>;

/** How reasoning is summarised. */
export const ReasoningSummarySchema = z.enum(['auto', 'concise', 'detailed']);

/** `reasoning`: effort and summary mode. Other keys (`context`, `mode`, …) are carried. */
export const ReasoningConfigSchema = z.looseObject({
  effort: optionalField(ReasoningEffortSchema),
  summary: optionalField(ReasoningSummarySchema),
  /** Deprecated alias of `summary` that older clients still send. */
  generate_summary: optionalField(ReasoningSummarySchema),
});
/** The `reasoning` request field. */
export type ReasoningConfig = z.infer<typeof ReasoningConfigSchema>;

/** Structured output with a JSON Schema. */
export const JsonSchemaFormatSchema = z.looseObject({
  type: z.literal('json_schema'),
  name: z.string().min(1).max(64),
  schema: z.record(z.string(), z.unknown()),
  strict: optionalField(z.boolean()),
  description: optionalField(z.string()),
});

/**
 * `text.format`. Strictly one of the three known formats: an unknown format is a constraint
 * the model cannot honour, so it is an error rather than something to carry along.
 */
export const TextFormatSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  JsonSchemaFormatSchema,
]);
/** The `text.format` request field. */
export type TextFormat = z.infer<typeof TextFormatSchema>;

/** `text.verbosity`. */
export const VerbositySchema = z.enum(['low', 'medium', 'high']);

/** `text`: output format and verbosity. */
export const TextConfigSchema = z.looseObject({
  format: optionalField(TextFormatSchema),
  verbosity: optionalField(VerbositySchema),
});
/** The `text` request field. */
export type TextConfig = z.infer<typeof TextConfigSchema>;

/**
 * One `context_management` entry. `compaction` with `compact_threshold`: when the rendered input
 * passes that many tokens the server compacts in-line. Other types are carried and ignored.
 */
export const ContextManagementSchema = z.looseObject({
  type: z.string(),
  compact_threshold: optionalField(z.int().min(1)),
});
/** A `context_management` entry. */
export type ContextManagement = z.infer<typeof ContextManagementSchema>;

/** The fields of `POST /v1/responses`, shared with the WebSocket `response.create` event. */
const requestShape = {
  model: z.string().min(1),
  /** Optional as in OpenAI's API: a continuation may send only `previous_response_id`. */
  input: optionalField(z.union([z.string(), z.array(InputItemSchema)])),
  /** Not carried over by `previous_response_id`: each request states its own. */
  instructions: optionalField(z.string()),
  tools: z
    .array(ToolSchema)
    .nullish()
    .transform((tools) => tools ?? []),
  tool_choice: ToolChoiceSchema.nullish().transform((choice) => choice ?? 'auto'),
  parallel_tool_calls: z
    .boolean()
    .nullish()
    .transform((value) => value ?? true),
  previous_response_id: optionalField(z.string().min(1)),
  /** Defaults to true, as in OpenAI's API. Coding CLIs send `false` and chain in memory. */
  store: z
    .boolean()
    .nullish()
    .transform((value) => value ?? true),
  stream: optionalField(z.boolean()),
  max_output_tokens: optionalField(integerAtLeast(16)),
  temperature: optionalField(z.number().min(0).max(2)),
  top_p: optionalField(z.number().min(0).max(1)),
  metadata: optionalField(MetadataSchema),
  reasoning: optionalField(ReasoningConfigSchema),
  text: optionalField(TextConfigSchema),
  /** e.g. `reasoning.encrypted_content`; unknown values are tolerated. */
  include: optionalField(z.array(z.string())),
  prompt_cache_key: optionalField(z.string()),
  user: optionalField(z.string()),
  safety_identifier: optionalField(z.string()),
  truncation: optionalField(z.enum(['auto', 'disabled'])),
  /** Parsed so callers can reject it: fastloop does not run responses in the background. */
  background: optionalField(z.boolean()),
  service_tier: optionalField(z.string()),
  context_management: optionalField(z.array(ContextManagementSchema)),
};

/**
 * The body of `POST /v1/responses`.
 *
 * Unknown top-level fields (`client_metadata`, `conversation`, `stream_options`, …) are
 * **stripped**: accepted without error but absent from the parsed value, so nothing downstream
 * depends on fields we do not implement. Inside items, parts and tools unknown fields are
 * **kept** (loose objects), because those are stored and echoed back.
 *
 * Defaults applied while parsing: `store` true, `parallel_tool_calls` true, `tool_choice`
 * `auto`, `tools` `[]`. Every other optional field reads `undefined` when absent or null.
 */
export const ResponseCreateRequestSchema = z.object(requestShape);
/** A validated `POST /v1/responses` body. */
export type ResponseCreateRequest = z.infer<typeof ResponseCreateRequestSchema>;

// `stream` is implied on a socket: leaving it out of the shape strips it if a client sends it.
const { stream: _streamIsImplied, ...eventShape } = requestShape;

/**
 * The WebSocket `response.create` client event: the request fields flat at the top level
 * (no nested `response`), plus `generate`. `stream` is implied and stripped if sent.
 */
export const ResponseCreateEventSchema = z.object({
  ...eventShape,
  type: z.literal('response.create'),
  /** `false`: do all pre-inference work, sample nothing, complete with empty output. */
  generate: optionalField(z.boolean()),
});
/** A validated WebSocket `response.create` event. */
export type ResponseCreateEvent = z.infer<typeof ResponseCreateEventSchema>;
