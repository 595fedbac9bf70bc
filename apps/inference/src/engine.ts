import type { EngineName } from './config';
import type { RequestConstraints } from './request-constraints';
import type { SequenceLog } from './sequence-log';

/** One generation as an engine sees it: a full token prompt, never items, tenants or billing. */
export interface EngineRequest {
  /**
   * The whole prompt (session prefix ++ new tokens), validated against the vocabulary: a view of
   * `promptLog`'s first tokens, never copied per call (use `Array.from` where a number[] is needed).
   */
  prompt: Uint32Array;
  /**
   * The append-only log the prompt is a view of. A session's calls share one log, and its written
   * tokens never change, so an engine may key per-conversation state on it (what it already read
   * of the prompt) and read only the new tokens. Absent for prompts built outside the worker.
   */
  promptLog?: SequenceLog;
  /** Leading prompt tokens the session cache holds: the engine need not prefill them. */
  cachedTokens: number;
  /** The engine may stop after this many tokens; the caller cuts there anyway. */
  maxOutputTokens: number;
  /** Sampling ends after any of these; the caller cuts there anyway. */
  stopTokens: ReadonlySet<number>;
  temperature?: number;
  topP?: number;
  seed?: number;
  /** `performance.now()` when the call arrived; timing (TTFT) is measured from it. */
  arrivedAt: number;
  /** Aborted when the caller cancels or its deadline passes: stop at once, free resources. */
  signal: AbortSignal;
  /**
   * Engines call this once with the ms they spent reading the prompt (parsing, tokenizing) before
   * they could start; the worker records it as `inference_worker_seconds{part="engine_read"}`.
   */
  onPromptRead?: (ms: number) => void;
  /** The session this prompt continues (its own key, or the parent's); engines keep KV state by it. */
  sessionKey?: string;
  /**
   * The request's cache salt (tenant scope): engines that reuse KV state by content must do so only
   * between calls with the same salt. '' = unsalted.
   */
  cacheSalt?: string;
  /**
   * Engines with their own KV state call this once, before the first token, with what they really
   * skip and evaluate: the worker then reports the engine's skip as `cached_tokens`.
   */
  onPrefill?(prefill: EnginePrefill): void;
  /**
   * Engines that, after a completion, evaluate how the next turn's prompt will render it (the chat
   * template's tokens for the sampled items, where they differ from the sampled ones) call this
   * with the tokens that took, so the work is counted (`inference_engine_aligned_tokens_total`).
   */
  onAligned?(evaluatedTokens: number): void;
  /**
   * Engines with a context window call this when they stop because it is full (before the caller's
   * `maxOutputTokens`): the answer is cut by length, not finished, and the worker says so (LENGTH,
   * `incomplete` at the edge) instead of passing a truncated value off as complete.
   */
  onContextFull?(): void;
  /**
   * What the request forces (tool_choice, JSON text.format). The one source every chat format
   * carries: harmony prompts do not say it; chat-template prompts also do (llamacpp reads those).
   */
  constraints?: RequestConstraints;
}

/** How an engine prefilled one prompt. */
export interface EnginePrefill {
  /** Leading prompt tokens taken from the engine's KV state, not evaluated. */
  cachedTokens: number;
  /** Prompt tokens the engine evaluated. */
  evaluatedTokens: number;
}

/** An upstream's answer to {@link Engine.checkHealth}. */
export type EngineHealth = { readonly healthy: true } | { readonly healthy: false; readonly reason: string };

/**
 * What every engine implements (`sim`, `llamacpp`; `openai-compatible` later). An engine
 * yields sampled tokens in chunks as they become available; the caller writes each chunk before
 * pulling the next, which is how back-pressure reaches the engine.
 */
export interface Engine {
  readonly name: EngineName;
  /** True for the simulated accelerator; shown in logs, metrics and health so nobody mistakes it. */
  readonly simulated: boolean;
  /** Streams sampled token chunks. Ends when done or when `signal` aborts (without throwing). */
  generate(request: EngineRequest): AsyncIterable<readonly number[]>;
  /**
   * Drops the KV state an engine keeps for a (salted) session key, if any: ForgetSession, for a
   * prompt safety blocked after its call finished. Engines without their own KV state omit it.
   */
  forget?(sessionKey: string): void;
  /** For engines in front of another server: that server (its base URL), named in logs and /readyz. */
  readonly upstream?: string;
  /**
   * For engines in front of another server: whether it can take calls now, and why not. The worker
   * polls it and reports NOT_SERVING while it is unhealthy, so the router sends traffic elsewhere.
   */
  checkHealth?(signal: AbortSignal): Promise<EngineHealth>;
  /** Releases the engine's resources. Idempotent. */
  close(): Promise<void>;
}
