import type { inferenceV1 } from '@fastloop/proto';

/** Tokens one TokenChunk carries at most, by default (INFERENCE_MAX_CHUNK_TOKENS). */
export const DEFAULT_MAX_CHUNK_TOKENS = 256;

/** What the writer needs of a Generate call (grpc-js's ServerWritableStream). */
export interface ChunkSink {
  write(message: inferenceV1.GenerateResponse): boolean;
  on(event: 'drain', listener: () => void): unknown;
  off(event: 'drain', listener: () => void): unknown;
}

/** Options of {@link TokenChunkWriter}. */
export interface TokenChunkWriterOptions {
  /** Tokens per TokenChunk at most, and held while the call does not drain (INFERENCE_MAX_CHUNK_TOKENS); default 256. */
  maxChunkTokens?: number;
  /** The worker's time since the call arrived, ms: a chunk's `engine_elapsed_ms` when it is written. */
  elapsedMs: () => number;
  /** What the first chunk reports as prefilled: read when it is written (the engine reports before its first token). */
  firstCounts: () => Pick<inferenceV1.TokenChunk, 'promptTokens' | 'cachedTokens'>;
  /** The call's cancellation: nothing waits for a drain past it. */
  signal: AbortSignal;
  /** Called with each TokenChunk as it is written. */
  onChunk?: (chunk: inferenceV1.TokenChunk) => void;
}

/**
 * Writes a Generate call's sampled tokens as TokenChunk messages. While the call drains, each
 * engine chunk goes out as it comes (the first token at once). While it does not (the edge reads
 * slower than the engine samples), what keeps coming is held and leaves as one message on the
 * next drain: one message for the edge to decode, parse and relay instead of one per engine step,
 * so a consumer that fell behind catches up with less work per token. The hold is bounded: at
 * `maxChunkTokens` held, {@link push} waits for the drain, and the engine waits with it.
 */
export class TokenChunkWriter {
  private held: number[] = [];
  private flowing = true;
  private first = true;
  private waiters: Array<() => void> = [];
  private readonly max: number;

  constructor(
    private readonly call: ChunkSink,
    private readonly options: TokenChunkWriterOptions,
  ) {
    this.max = options.maxChunkTokens ?? DEFAULT_MAX_CHUNK_TOKENS;
    if (!Number.isInteger(this.max) || this.max < 1)
      throw new RangeError(`maxChunkTokens must be an integer ≥ 1, got ${this.max}`);
    call.on('drain', this.onDrain);
    options.signal.addEventListener('abort', this.wake, { once: true });
  }

  /** Sends (or holds) `tokens`; resolves when the caller may take more from the engine. */
  async push(tokens: readonly number[]): Promise<void> {
    for (const t of tokens) this.held.push(t);
    if (this.flowing) this.writeHeld();
    while (this.held.length >= this.max && !this.options.signal.aborted) await this.drained();
  }

  /** Resolves once every held token is written, or the call was cancelled. */
  async flush(): Promise<void> {
    while (this.held.length > 0 && !this.options.signal.aborted) await this.drained();
  }

  /** Stops listening to the call. Safe to call twice. */
  close(): void {
    this.call.off('drain', this.onDrain);
    this.options.signal.removeEventListener('abort', this.wake);
    this.wake();
  }

  private readonly onDrain = (): void => {
    this.flowing = true;
    this.writeHeld();
    this.wake();
  };

  private readonly wake = (): void => {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  };

  private drained(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Writes what is held, at most `max` tokens a message, until the call stops taking more. */
  private writeHeld(): void {
    while (this.held.length > 0 && this.flowing) {
      const tokens = this.held.length <= this.max ? this.held : this.held.slice(0, this.max);
      this.held = this.held.length <= this.max ? [] : this.held.slice(this.max);
      const counts = this.first ? this.options.firstCounts() : { promptTokens: 0, cachedTokens: 0 };
      this.first = false;
      const value: inferenceV1.TokenChunk = { tokens, engineElapsedMs: this.options.elapsedMs(), ...counts };
      this.options.onChunk?.(value);
      this.flowing = this.call.write({ event: { $case: 'chunk', value } });
    }
  }
}
