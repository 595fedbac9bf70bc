import type { EngineName } from './config';

/** One generation as an engine sees it: a full token prompt, never items, tenants or billing. */
export interface EngineRequest {
  /** The whole prompt (session prefix ++ new tokens), validated against the vocabulary. */
  prompt: readonly number[];
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
  /** The session this prompt continues (its own key, or the parent's); engines keep KV state by it. */
  sessionKey?: string;
  /**
   * Engines with their own KV state call this once, before the first token, with what they really
   * skip and evaluate: the worker then reports the engine's skip as `cached_tokens`.
   */
  onPrefill?(prefill: EnginePrefill): void;
}

/** How an engine prefilled one prompt. */
export interface EnginePrefill {
  /** Leading prompt tokens taken from the engine's KV state, not evaluated. */
  cachedTokens: number;
  /** Prompt tokens the engine evaluated. */
  evaluatedTokens: number;
}

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
   * For engines in front of another server: whether it can take calls now. The worker polls it and
   * reports NOT_SERVING while it is false, so the router sends traffic elsewhere.
   */
  checkHealth?(signal: AbortSignal): Promise<boolean>;
  /** Releases the engine's resources. Idempotent. */
  close(): Promise<void>;
}
