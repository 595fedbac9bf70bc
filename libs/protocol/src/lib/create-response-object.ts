import type { ResponseCreateRequest } from './response-create-request-schema';
import type { ResponseObject, Usage } from './response-object-schema';

/** Identity of a new Response; everything else comes from the request. */
export interface ResponseObjectOptions {
  /** `resp_…`, normally `newId('resp')`. */
  id: string;
  /** The model to report: the one that serves the request, which may differ from the alias asked for. */
  model: string;
  /** Creation time in Unix **seconds** (not milliseconds); fractions are dropped. */
  createdAt: number;
  /** Defaults to the request's `previous_response_id`. */
  previousResponseId?: string | null;
}

/**
 * Builds the initial (`in_progress`) Response for a validated request, echoing its settings
 * with OpenAI's defaults filled in: `tool_choice` auto, `parallel_tool_calls` true,
 * `temperature`/`top_p` 1, `text.format` text, `truncation` disabled, `service_tier` default.
 * `output` is empty and `usage`, `error`, `completed_at` are null until the caller settles it.
 */
export function createResponseObject(req: ResponseCreateRequest, options: ResponseObjectOptions): ResponseObject {
  return {
    id: options.id,
    object: 'response',
    created_at: Math.floor(options.createdAt),
    completed_at: null,
    status: 'in_progress',
    background: false,
    model: options.model,
    output: [],
    error: null,
    incomplete_details: null,
    instructions: req.instructions ?? null,
    metadata: req.metadata ?? {},
    previous_response_id: options.previousResponseId ?? req.previous_response_id ?? null,
    tools: req.tools,
    tool_choice: req.tool_choice,
    parallel_tool_calls: req.parallel_tool_calls,
    store: req.store,
    temperature: req.temperature ?? 1,
    top_p: req.top_p ?? 1,
    text: { format: req.text?.format ?? { type: 'text' }, verbosity: req.text?.verbosity ?? 'medium' },
    reasoning: {
      effort: req.reasoning?.effort ?? null,
      summary: req.reasoning?.summary ?? req.reasoning?.generate_summary ?? null,
    },
    max_output_tokens: req.max_output_tokens ?? null,
    truncation: req.truncation ?? 'disabled',
    usage: null,
    user: req.user ?? null,
    safety_identifier: req.safety_identifier ?? null,
    prompt_cache_key: req.prompt_cache_key ?? null,
    service_tier: 'default',
  };
}

/** Token counts as the worker reports them. */
export interface UsageCounts {
  /** Prompt tokens, cached ones included. */
  inputTokens: number;
  /** Prompt tokens the worker did not have to prefill (reused from its cache). Default 0. */
  cachedTokens?: number;
  /** Prompt tokens written to the cache by this request. Default 0. */
  cacheWriteTokens?: number;
  /** Sampled tokens, reasoning included. */
  outputTokens: number;
  /** The part of `outputTokens` spent on reasoning. Default 0. */
  reasoningTokens?: number;
}

/** Builds `usage`; `total_tokens` is input + output. */
export function createUsage(counts: UsageCounts): Usage {
  return {
    input_tokens: counts.inputTokens,
    input_tokens_details: { cached_tokens: counts.cachedTokens ?? 0, cache_write_tokens: counts.cacheWriteTokens ?? 0 },
    output_tokens: counts.outputTokens,
    output_tokens_details: { reasoning_tokens: counts.reasoningTokens ?? 0 },
    total_tokens: counts.inputTokens + counts.outputTokens,
  };
}
