import { performance } from 'node:perf_hooks';
import type { Engine, EnginePrefill, EngineRequest } from '../engine';

/** Seconds of history the rates are averaged over. */
const RATE_WINDOW_S = 5;

/**
 * Counts events into one-second buckets over the last {@link RATE_WINDOW_S} seconds, so a rate
 * reads the recent past without keeping one entry per event.
 */
class RateWindow {
  private readonly buckets = new Float64Array(RATE_WINDOW_S);
  private bucketSecond = 0;

  add(count: number, nowMs: number): void {
    this.roll(nowMs);
    this.buckets[this.bucketSecond % RATE_WINDOW_S] += count;
  }

  /** Events per second over the window (the current, partial second included). */
  perSecond(nowMs: number): number {
    this.roll(nowMs);
    let sum = 0;
    for (const b of this.buckets) sum += b;
    return sum / RATE_WINDOW_S;
  }

  private roll(nowMs: number): void {
    const second = Math.floor(nowMs / 1000);
    if (second === this.bucketSecond) return;
    const steps = Math.min(RATE_WINDOW_S, second - this.bucketSecond);
    for (let i = 1; i <= steps; i++) this.buckets[(this.bucketSecond + i) % RATE_WINDOW_S] = 0;
    this.bucketSecond = second;
  }
}

/**
 * The engine-side half of a worker's load (the in-flight count is GenerateService's): prompt tokens
 * waiting to be prefilled by calls that have no first token yet, and the prefill and decode rates.
 * It wraps the engine ({@link meter}), so GenerateService needs no hook of its own.
 */
export class LoadMeter {
  private queued = 0;
  private readonly prefill = new RateWindow();
  private readonly decode = new RateWindow();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Prompt tokens of calls in the engine still to be prefilled. */
  get queuedPrefillTokens(): number {
    return this.queued;
  }

  prefillTokensPerSecond(): number {
    return this.prefill.perSecond(this.now());
  }

  decodeTokensPerSecond(): number {
    return this.decode.perSecond(this.now());
  }

  /** `engine` with every generate() call metered. */
  meter(engine: Engine): Engine {
    const self = this;
    const metered: Engine = {
      name: engine.name,
      simulated: engine.simulated,
      ...(engine.upstream ? { upstream: engine.upstream } : {}),
      generate: (request) => self.track(request, engine),
      close: () => engine.close(),
    };
    if (engine.forget) metered.forget = (key) => engine.forget!(key);
    if (engine.checkHealth) metered.checkHealth = (signal) => engine.checkHealth!(signal);
    return metered;
  }

  private async *track(request: EngineRequest, engine: Engine): AsyncGenerator<readonly number[]> {
    // What the worker expects to prefill; an engine with its own KV state corrects it before its
    // first token (onPrefill), and that correction is what counts.
    let pending = Math.max(0, request.prompt.length - request.cachedTokens);
    this.queued += pending;
    const onPrefill = request.onPrefill;
    const wrapped: EngineRequest = {
      ...request,
      onPrefill: (p: EnginePrefill) => {
        const real = Math.max(0, p.evaluatedTokens);
        this.queued += real - pending;
        pending = real;
        onPrefill?.(p);
      },
    };
    let first = true;
    try {
      for await (const chunk of engine.generate(wrapped)) {
        if (first) {
          first = false;
          this.queued -= pending;
          this.prefill.add(pending, this.now());
          pending = 0;
        }
        this.decode.add(chunk.length, this.now());
        yield chunk;
      }
    } finally {
      this.queued -= pending;
    }
  }
}
