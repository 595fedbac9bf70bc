import type { EngineRequest } from '../../engine';

/** Upstream servers this engine speaks to, each through its token-id API. */
export const DIALECTS = ['vllm', 'sglang', 'llama-server'] as const;
export type DialectName = (typeof DIALECTS)[number];

/** What one streamed upstream event adds. */
export interface UpstreamStep {
  /** Newly sampled token ids. */
  tokens: number[];
  /** Prompt tokens the upstream says it served from its cache, when it says so. */
  cachedTokens?: number;
  /** The upstream's own end-of-stream event (llama-server `stop: true`); others end with `[DONE]`. */
  finished?: boolean;
}

/** Per-call reader state (SGLang may send cumulative ids). */
export interface ReadState {
  emitted: number;
}

/** How to ask one upstream for a streamed, token-id completion and read its events. */
export interface Dialect {
  readonly path: string;
  body(request: EngineRequest, options: { model: string; slot?: number }): Record<string, unknown>;
  /** Reads one `data:` JSON event; throws on an error event. */
  read(event: Record<string, unknown>, state: ReadState): UpstreamStep;
}

const ids = (value: unknown): number[] =>
  Array.isArray(value) ? value.filter((v): v is number => Number.isInteger(v)) : [];
const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

function errorOf(event: Record<string, unknown>): string | undefined {
  const err = event.error;
  if (typeof err === 'string') return err;
  if (err && typeof err === 'object') return String((err as { message?: unknown }).message ?? JSON.stringify(err));
  if (event.object === 'error') return String(event.message ?? 'upstream error');
  return undefined;
}

function failOnError(event: Record<string, unknown>): void {
  const message = errorOf(event);
  if (message !== undefined) throw new Error(`upstream error event: ${message}`);
}

/**
 * vLLM `POST /v1/completions` with the prompt as token ids and `return_token_ids` (vLLM ≥ 0.10.2):
 * each chunk's `choices[0].token_ids` are the new ids; the usage chunk (`stream_options.include_usage`)
 * carries `prompt_tokens_details.cached_tokens` when the server runs with
 * `--enable-prompt-tokens-details`.
 */
export const vllm: Dialect = {
  path: '/v1/completions',
  body: (r, { model }) => ({
    model,
    prompt: Array.from(r.prompt),
    max_tokens: r.maxOutputTokens,
    temperature: r.temperature,
    top_p: r.topP,
    seed: r.seed,
    stop_token_ids: [...r.stopTokens],
    stream: true,
    stream_options: { include_usage: true },
    return_token_ids: true,
    skip_special_tokens: false,
  }),
  read(event) {
    failOnError(event);
    const choice = Array.isArray(event.choices) ? (event.choices[0] as Record<string, unknown> | undefined) : undefined;
    const usage = event.usage as { prompt_tokens_details?: { cached_tokens?: unknown } } | null | undefined;
    return { tokens: ids(choice?.token_ids), cachedTokens: num(usage?.prompt_tokens_details?.cached_tokens) };
  },
};

/**
 * SGLang native `POST /generate` with `input_ids`: events carry `output_ids` (cumulative by default,
 * only the new ones with `--stream-output`; told apart by `meta_info.completion_tokens`) and
 * `meta_info.cached_tokens` (RadixAttention's prefix hit).
 */
export const sglang: Dialect = {
  path: '/generate',
  body: (r) => ({
    input_ids: Array.from(r.prompt),
    sampling_params: {
      max_new_tokens: r.maxOutputTokens,
      temperature: r.temperature,
      top_p: r.topP,
      stop_token_ids: [...r.stopTokens],
      skip_special_tokens: false,
    },
    stream: true,
  }),
  read(event, state) {
    failOnError(event);
    const meta = (event.meta_info ?? {}) as Record<string, unknown>;
    const output = ids(event.output_ids);
    const cumulative = num(meta.completion_tokens) === output.length && output.length >= state.emitted;
    const tokens = cumulative ? output.slice(state.emitted) : output;
    state.emitted += tokens.length;
    return { tokens, cachedTokens: num(meta.cached_tokens) };
  },
};

/**
 * llama.cpp `llama-server` `POST /completion` with a token prompt, `cache_prompt` and `id_slot` (the
 * session's slot, so a conversation keeps its KV); `return_tokens` puts each event's ids in
 * `tokens`; the final event (`stop: true`) reports `tokens_cached` / `timings.cache_n`.
 */
export const llamaServer: Dialect = {
  path: '/completion',
  body: (r, { slot }) => ({
    prompt: Array.from(r.prompt),
    n_predict: r.maxOutputTokens,
    temperature: r.temperature,
    top_p: r.topP,
    seed: r.seed,
    stream: true,
    cache_prompt: true,
    return_tokens: true,
    id_slot: slot ?? -1,
  }),
  read(event) {
    failOnError(event);
    const timings = (event.timings ?? {}) as Record<string, unknown>;
    return {
      tokens: ids(event.tokens),
      cachedTokens: num(timings.cache_n) ?? num(event.tokens_cached),
      finished: event.stop === true,
    };
  },
};

export const DIALECT_BY_NAME: Readonly<Record<DialectName, Dialect>> = { vllm, sglang, 'llama-server': llamaServer };
