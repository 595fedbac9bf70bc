import type { inferenceV1 } from '@fastloop/proto';
import { createUsage, type Usage } from '@fastloop/protocol';

/** What a turn has cost so far, kept up to date while it streams (billed even if it fails). */
export class UsageMeter {
  /** Every token sampled so far, in order (the continuation's worker state keeps them). */
  readonly sampled: number[] = [];
  reasoningTokens = 0;
  cachedTokens = 0;

  /** @param promptTokens the rendered prompt's length: the worker's own count once its first chunk says so. */
  constructor(public promptTokens: number) {}

  /** Counts a chunk; `reasoning` when it continues a reasoning item. */
  add(chunk: inferenceV1.TokenChunk, reasoning: boolean): void {
    if (chunk.promptTokens > 0) {
      this.promptTokens = chunk.promptTokens;
      this.cachedTokens = chunk.cachedTokens;
    }
    for (const t of chunk.tokens) this.sampled.push(t);
    if (reasoning) this.reasoningTokens += chunk.tokens.length;
  }

  /** Nothing reached a worker: nothing was prefilled or sampled. */
  nothingPrefilled(): void {
    this.promptTokens = 0;
  }

  usage(): Usage {
    return createUsage({
      inputTokens: this.promptTokens,
      cachedTokens: this.cachedTokens,
      outputTokens: this.sampled.length,
      reasoningTokens: this.reasoningTokens,
    });
  }

  /** The usage a finished call reports, with the reasoning tokens counted here. */
  finalUsage(done: inferenceV1.GenerateDone): Usage {
    return createUsage({
      inputTokens: done.promptTokens,
      cachedTokens: done.cachedTokens,
      outputTokens: done.completionTokens,
      reasoningTokens: this.reasoningTokens,
    });
  }
}
