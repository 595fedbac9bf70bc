import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { ModelProfile, ParsedPrompt, PromptReader } from '@fastloop/model-profiles';
import type { Engine, EngineRequest } from '../../engine';
import type { RequestConstraints } from '../../request-constraints';
import { createRandom, hashNumbers } from '@fastloop/service-kit';
import { dueCount, nextWakeDelay, scheduleTokens, timeToFirstTokenMs, type SimPace } from './sim-pacing';
import { guardCompletion, type SimGuardOptions } from './sim-guard';
import { SimPrefillQueue } from './sim-prefill-queue';
import { scriptCompletion, type SimScriptOptions } from './sim-script';

/** Options of {@link SimEngine}. */
export interface SimEngineOptions {
  /** The chat format and tokenizer the simulated model reads and writes. */
  profile: ModelProfile;
  /** Timing model (SIM_TTFT_MS, SIM_PREFILL_TOKENS_PER_SECOND, SIM_TOKENS_PER_SECOND, SIM_JITTER). */
  pace: SimPace;
  /** Agent script (SIM_TOOL_CALLS, SIM_ANSWER_WORDS). */
  script: SimScriptOptions;
  /** Guard policy, for prompts that ask for a guard verdict (SIM_GUARD_BLOCK_TERMS); default: none blocks. */
  guard?: SimGuardOptions;
  /**
   * SIM_SHARED_PREFILL: every call's uncached prompt waits in one first-come-first-served prefill
   * queue at `pace.prefillTokensPerSecond` (one accelerator), instead of prefilling at that rate
   * alongside every other call. Default false.
   */
  sharedPrefill?: boolean;
  /** Minimum spacing of chunks after the first, ms; default 5. */
  tickMs?: number;
  /** Clock; default `performance.now`. */
  now?: () => number;
  logger?: Logger;
}

/** Prompt tokens (from the end) that seed the per-request PRNG when the request has no seed. */
const SEED_WINDOW = 256;

/**
 * The SIMULATED accelerator: reads the prompt as the model profile's chat format, decides what an
 * agent model would do next (tool calls, then an answer), and streams the real tokens of that
 * completion at a configured TTFT / prefill / decode pace. No model runs here.
 */
export class SimEngine implements Engine {
  readonly name = 'sim' as const;
  readonly simulated = true;
  private readonly tickMs: number;
  private readonly now: () => number;
  private closed = false;
  private readonly prefillQueue: SimPrefillQueue | undefined;

  constructor(private readonly options: SimEngineOptions) {
    this.tickMs = options.tickMs ?? 5;
    this.now = options.now ?? (() => performance.now());
    if (options.sharedPrefill) this.prefillQueue = new SimPrefillQueue(options.pace.prefillTokensPerSecond);
  }

  async *generate(request: EngineRequest): AsyncGenerator<readonly number[]> {
    if (this.closed) throw new Error('sim engine is closed');
    const readStart = this.now();
    const completion = cutCompletion(
      this.complete(request.prompt, request.promptLog, request.constraints),
      request.maxOutputTokens,
      request.stopTokens,
    );
    request.onPromptRead?.(this.now() - readStart);
    const { pace } = this.options;
    const seed = request.seed ?? hashNumbers(request.prompt.slice(-SEED_WINDOW), request.prompt.length);
    const uncached = request.prompt.length - request.cachedTokens;
    const ttftMs = this.prefillQueue
      ? pace.ttftMs + this.now() - request.arrivedAt + this.prefillQueue.reserve(uncached, this.now())
      : timeToFirstTokenMs(uncached, pace);
    const schedule = scheduleTokens(completion.length, pace.tokensPerSecond, ttftMs, pace.jitter, createRandom(seed));
    let next = 0;
    let lastEmit = -Infinity;
    while (next < completion.length) {
      const wait = nextWakeDelay(schedule, next, this.now() - request.arrivedAt, lastEmit, this.tickMs);
      if (wait > 0) await sleep(wait, request.signal);
      if (request.signal.aborted) return;
      const elapsed = this.now() - request.arrivedAt;
      const end = dueCount(schedule, next, elapsed);
      if (end === next) continue; // woke a hair early; the next wait is tiny
      yield completion.slice(next, end);
      next = end;
      lastEmit = elapsed;
    }
  }

  /**
   * The full completion the simulated model samples for `prompt`. With the append-only log the
   * prompt lives in, the sim keeps what it read of that log and reads only the new messages (a
   * session's turn costs O(new tokens)); without one it parses the whole prompt.
   */
  complete(prompt: ArrayLike<number>, log?: object, constraints?: RequestConstraints): number[] {
    const { logger, guard } = this.options;
    return simulateCompletion(this.options.profile, prompt, this.options.script, {
      logger,
      reader: log && this.readerFor(log),
      constraints,
      guard,
    });
  }

  // Keyed weakly by the log: a reader lives as long as some held sequence still uses its log.
  private readonly readers = new WeakMap<object, PromptReader>();

  private readerFor(log: object): PromptReader | undefined {
    let reader = this.readers.get(log);
    if (reader === undefined) {
      reader = this.options.profile.createPromptReader?.();
      if (reader !== undefined) this.readers.set(log, reader);
    }
    return reader;
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** Optional inputs of {@link simulateCompletion}. */
export interface SimulateOptions {
  logger?: Logger;
  /** Reads an append-only prompt incrementally (see SimEngine.complete). */
  reader?: PromptReader;
  /** The request's forced tool choice and format; they win over what the prompt's format carries. */
  constraints?: RequestConstraints;
  /** Guard policy, for prompts that ask for a guard verdict; default: no term blocks. */
  guard?: SimGuardOptions;
}

/**
 * Reads `prompt` like the model would and renders what it answers, as tokens: a verdict when the
 * prompt asks for one (sim-guard), else the agent script's next step. A prompt the profile
 * cannot take apart is read as an empty conversation: a model still answers garbage with something.
 */
export function simulateCompletion(
  profile: ModelProfile,
  prompt: ArrayLike<number>,
  script: SimScriptOptions,
  options: SimulateOptions = {},
): number[] {
  const { logger, reader, constraints, guard = { blockTerms: [] } } = options;
  let parsed: ParsedPrompt;
  try {
    parsed = reader !== undefined ? reader.read(prompt) : profile.parsePrompt(Array.from(prompt));
  } catch (err) {
    logger?.debug({ err, engine: 'sim' }, 'simulated model could not parse the prompt; answering without context');
    parsed = { messages: [], tools: [], endsWithGenerationPrompt: true };
  }
  // A copy: a reader may hand back the parse it keeps.
  if (constraints)
    parsed = {
      ...parsed,
      toolChoice: constraints.toolChoice ?? parsed.toolChoice,
      responseFormat: constraints.responseFormat ?? parsed.responseFormat,
    };
  return profile.renderCompletion(guardCompletion(parsed, guard) ?? scriptCompletion(parsed, script));
}

/** The completion up to and including its first stop token, at most `max` tokens. */
export function cutCompletion(tokens: readonly number[], max: number, stopTokens: ReadonlySet<number>): number[] {
  const limit = Math.min(tokens.length, max);
  for (let i = 0; i < limit; i++) if (stopTokens.has(tokens[i])) return tokens.slice(0, i + 1);
  return tokens.slice(0, limit);
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
