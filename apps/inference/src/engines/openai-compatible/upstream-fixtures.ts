/**
 * Recorded-shape fixtures of the three upstreams' streamed responses (fields as their docs and
 * servers emit them), for the fake servers of the unit tests. Prompt [1, 2, 3]; samples 9906, 385
 * and EOS 2; the upstream served 2 prompt tokens from its cache.
 */
import type { DialectName } from './dialects';

const vllmChunk = (choice: Record<string, unknown>, usage: unknown = null) =>
  JSON.stringify({
    id: 'cmpl-7f',
    object: 'text_completion',
    created: 1764547200,
    model: 'm',
    choices: choice ? [{ index: 0, logprobs: null, stop_reason: null, ...choice }] : [],
    usage,
  });

export const STREAMS: Readonly<Record<DialectName | 'sglang-incremental', string[]>> = {
  vllm: [
    vllmChunk({ text: 'Hel', token_ids: [9906], finish_reason: null, prompt_token_ids: [1, 2, 3] }),
    vllmChunk({ text: 'lo', token_ids: [385], finish_reason: null }),
    vllmChunk({ text: '', token_ids: [2], finish_reason: 'stop' }),
    JSON.stringify({
      id: 'cmpl-7f',
      object: 'text_completion',
      created: 1764547200,
      model: 'm',
      choices: [],
      usage: { prompt_tokens: 3, total_tokens: 6, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 2 } },
    }),
    '[DONE]',
  ],
  sglang: [
    JSON.stringify({
      text: 'Hel',
      output_ids: [9906],
      meta_info: { id: 'a1', finish_reason: null, prompt_tokens: 3, completion_tokens: 1, cached_tokens: 2 },
      index: 0,
    }),
    JSON.stringify({
      text: 'Hello',
      output_ids: [9906, 385],
      meta_info: { id: 'a1', finish_reason: null, prompt_tokens: 3, completion_tokens: 2, cached_tokens: 2 },
      index: 0,
    }),
    JSON.stringify({
      text: 'Hello',
      output_ids: [9906, 385, 2],
      meta_info: {
        id: 'a1',
        finish_reason: { type: 'stop', matched: 2 },
        prompt_tokens: 3,
        completion_tokens: 3,
        cached_tokens: 2,
      },
      index: 0,
    }),
    '[DONE]',
  ],
  'sglang-incremental': [
    JSON.stringify({
      text: 'Hel',
      output_ids: [9906],
      meta_info: { id: 'a2', finish_reason: null, prompt_tokens: 3, completion_tokens: 1, cached_tokens: 2 },
      index: 0,
    }),
    JSON.stringify({
      text: 'lo',
      output_ids: [385],
      meta_info: { id: 'a2', finish_reason: null, prompt_tokens: 3, completion_tokens: 2, cached_tokens: 2 },
      index: 0,
    }),
    JSON.stringify({
      text: '',
      output_ids: [2],
      meta_info: {
        id: 'a2',
        finish_reason: { type: 'stop', matched: 2 },
        prompt_tokens: 3,
        completion_tokens: 3,
        cached_tokens: 2,
      },
      index: 0,
    }),
    '[DONE]',
  ],
  'llama-server': [
    JSON.stringify({
      index: 0,
      content: 'Hel',
      tokens: [9906],
      stop: false,
      id_slot: 1,
      tokens_predicted: 1,
      tokens_evaluated: 3,
    }),
    JSON.stringify({
      index: 0,
      content: 'lo',
      tokens: [385],
      stop: false,
      id_slot: 1,
      tokens_predicted: 2,
      tokens_evaluated: 3,
    }),
    JSON.stringify({
      index: 0,
      content: '',
      tokens: [2],
      stop: false,
      id_slot: 1,
      tokens_predicted: 3,
      tokens_evaluated: 3,
    }),
    JSON.stringify({
      index: 0,
      content: '',
      tokens: [],
      id_slot: 1,
      stop: true,
      model: 'm',
      tokens_predicted: 3,
      tokens_evaluated: 3,
      stop_type: 'eos',
      stopping_word: '',
      tokens_cached: 5,
      timings: { cache_n: 2, prompt_n: 1, prompt_ms: 1.2, predicted_n: 3, predicted_ms: 3.4 },
    }),
  ],
};

/** Error bodies each upstream answers a too-long prompt with (HTTP 400). */
export const ERRORS: Readonly<Record<DialectName, string>> = {
  vllm: JSON.stringify({
    object: 'error',
    message: "This model's maximum context length is 4096 tokens.",
    type: 'BadRequestError',
    param: null,
    code: 400,
  }),
  sglang: JSON.stringify({
    error: {
      message: 'The input (5000 tokens) is longer than the model context length (4096 tokens).',
      type: 'BadRequestError',
      code: 400,
    },
  }),
  'llama-server': JSON.stringify({
    error: { code: 400, message: 'the request exceeds the available context size', type: 'exceed_context_size_error' },
  }),
};
