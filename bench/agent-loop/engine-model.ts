import { DEFAULT_PROFILE_ID, getProfile, type ConversationEntry, type ModelProfile } from '@fastloop/model-profiles';

/**
 * What the simulated engine itself spends before the client's first output event, computed from
 * the sim's timing model (apps/inference/src/engines/sim/sim-pacing.ts and sim-engine.ts) and the response's
 * usage. Subtracting it from the client-observed time leaves the overhead around the engine.
 *
 *   engine TTFT   = SIM_TTFT_MS + (input_tokens − cached_tokens) × 1000 / SIM_PREFILL_TOKENS_PER_SECOND
 *   token i due   = engine TTFT + i × 1000 / SIM_TOKENS_PER_SECOND           (SIM_JITTER = 0)
 *   chunks        = first token alone at its due time, later ones batched at least SIM_TICK_MS apart
 *   first event   = emission time of the chunk holding the k-th completion token, where k is the
 *                   token at which the chat-format parser opens the first output item (harmony needs
 *                   the channel/recipient header, e.g. 12 tokens for a function call, 3 for a message)
 *
 * Timer lateness in the engine (setTimeout fires ≥ 1 ms late) is not in the model. The overhead
 * proper subtracts the worker's own reported time instead (engine_elapsed_ms); this model is the
 * fallback and the "vs model" figure, which does include that lateness.
 */

/** The sim's pacing knobs as the benchmark sets them. */
export interface SimPaceSettings {
  ttftMs: number;
  prefillTokensPerSecond: number;
  tokensPerSecond: number;
}

/** SimEngine's default minimum spacing of chunks after the first (not configurable by env). */
export const SIM_TICK_MS = 5;

/** Engine time to first token for a prompt with `uncachedTokens` to prefill, ms. */
export function engineTtftMs(
  uncachedTokens: number,
  pace: Pick<SimPaceSettings, 'ttftMs' | 'prefillTokensPerSecond'>,
): number {
  return pace.ttftMs + (Math.max(0, uncachedTokens) * 1000) / pace.prefillTokensPerSecond;
}

/**
 * When the engine emits its `k`-th token (1-based), ms after the request reached it: replays the
 * sim's chunking (first token exactly when due, then wake at max(next due, last emit + tick) and
 * send every token due by then).
 */
export function emissionTimeMs(k: number, ttftMs: number, tokensPerSecond: number, tickMs = SIM_TICK_MS): number {
  if (k < 1) throw new RangeError(`emissionTimeMs: k must be >= 1, got ${k}`);
  const interval = 1000 / tokensPerSecond;
  const due = (i: number) => ttftMs + i * interval;
  let emitted = 1; // tokens sent so far; the first goes out alone at ttft
  let at = ttftMs;
  while (emitted < k) {
    at = Math.max(due(emitted), at + tickMs);
    while (due(emitted) <= at + 1e-9) emitted++;
  }
  return at;
}

/** 1-based index of the completion token at which the parser opens the first output item. */
export function firstEventTokenIndex(profile: ModelProfile, entry: ConversationEntry): number {
  const tokens = profile.renderCompletion(entry);
  const parser = profile.createOutputParser();
  for (let i = 0; i < tokens.length; i++) {
    if (parser.push([tokens[i]]).some((e) => e.type === 'item_start')) return i + 1;
  }
  return Math.max(1, tokens.length);
}

/** The first output item of a Response, as the entry the engine rendered for it. */
export function outputEntry(item: Record<string, unknown>): ConversationEntry {
  if (item.type === 'function_call') {
    const e: ConversationEntry = {
      kind: 'function_call',
      name: String(item.name),
      arguments: String(item.arguments),
      callId: String(item.call_id),
    };
    if (typeof item.namespace === 'string') e.namespace = item.namespace;
    return e;
  }
  const content = Array.isArray(item.content) ? (item.content as { text?: string }[]) : [];
  return { kind: 'message', role: 'assistant', text: content.map((c) => c.text ?? '').join('') };
}

/** The engine-side timing of one response. */
export interface EngineTiming {
  /** SIM_TTFT_MS + uncached prefill. */
  ttftMs: number;
  /** When the token that opens the first output item left the engine. */
  firstEventMs: number;
  uncachedTokens: number;
}

let defaultProfile: ModelProfile | undefined;

/** Engine timing of a completed response (`usage` and first output item from the terminal event). */
export function engineTiming(
  usage: { input_tokens: number; input_tokens_details?: { cached_tokens?: number } },
  firstItem: Record<string, unknown>,
  pace: SimPaceSettings,
  profile: ModelProfile = (defaultProfile ??= getProfile(DEFAULT_PROFILE_ID)),
): EngineTiming {
  const uncachedTokens = usage.input_tokens - (usage.input_tokens_details?.cached_tokens ?? 0);
  const ttftMs = engineTtftMs(uncachedTokens, pace);
  const k = firstEventTokenIndex(profile, outputEntry(firstItem));
  return { ttftMs, firstEventMs: emissionTimeMs(k, ttftMs, pace.tokensPerSecond), uncachedTokens };
}
