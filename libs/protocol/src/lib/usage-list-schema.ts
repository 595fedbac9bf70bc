import { z } from 'zod';

/** Counters of one usage row or of the totals, as `GET /v1/usage` returns them. */
export const usageCountersSchema = z.object({
  responses: z.number(),
  input_tokens: z.number(),
  cached_tokens: z.number(),
  output_tokens: z.number(),
  reasoning_tokens: z.number(),
  cost_usd: z.number(),
});

/** One tenant's use of one model on one UTC day. */
export const usageRowSchema = usageCountersSchema.extend({ tenant: z.string(), model: z.string(), date: z.string() });

/** The body of `GET /v1/usage` (fastloop's usage API; OpenAI's organisation usage API differs). */
export const usageListSchema = z.object({
  object: z.literal('list'),
  data: z.array(usageRowSchema),
  totals: usageCountersSchema,
  start: z.string(),
  end: z.string(),
  /** More rows matched than one report returns. */
  has_more: z.boolean(),
});

export type UsageCounters = z.infer<typeof usageCountersSchema>;
export type UsageRow = z.infer<typeof usageRowSchema>;
export type UsageList = z.infer<typeof usageListSchema>;
