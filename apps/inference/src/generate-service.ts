import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { inferenceV1 } from '@fastloop/proto';
import { parseConstraints, type RequestConstraints } from './request-constraints';
import {
  DomainError,
  ErrorCode,
  MuxServer,
  toGrpcError,
  type InternalErrorCode,
  type SlotLease,
  type StreamingCall,
  hopTrace,
} from '@fastloop/service-kit';
import { saltSeed } from './block-hash';
import { effectiveMaxOutputTokens, limitChunk } from './completion-limits';
import type { Engine, EnginePrefill } from './engine';
import { engineError } from './inference-errors';
import type { GenerateOutcome, InferenceMetrics } from './inference-metrics';
import { matchPrefix } from './prefix-match';
import { assemblePrompt, sessionSequence, type AssembledPrompt } from './prompt-assembly';
import { validatePromptTokens } from './prompt-validation';
import type { SessionCache } from './session-cache';
import { SlotScheduler } from './slot-scheduler';
import { TokenChunkWriter } from './token-chunk-writer';

const { FinishReason } = inferenceV1;
// A plain Generate call or one on a GenerateStream (mux.proto): the same handler serves both.
type GenerateCall = StreamingCall<inferenceV1.GenerateRequest, inferenceV1.GenerateResponse>;

/** Options of {@link GenerateService}. */
export interface GenerateServiceOptions {
  engine: Engine;
  sessions: SessionCache;
  metrics: InferenceMetrics;
  logger: Logger;
  /** Stop tokens of the model profile; a request's own stop tokens are added to them. */
  profileStopTokens: readonly number[];
  /** Token ids 0..vocabSize-1 are valid. */
  vocabSize: number;
  /** INFERENCE_MAX_CONCURRENCY: calls generating at once; beyond, they wait for a slot (see `slots`). */
  maxConcurrency: number;
  /**
   * Shares the `maxConcurrency` slots between tenants (slot-scheduler.ts). Default: an eighth of
   * them kept from any one tenant, no waiting (a call that finds no slot fails `worker_overloaded`).
   */
  slots?: SlotScheduler;
  /** INFERENCE_MAX_OUTPUT_TOKENS: cap on sampled tokens per call. */
  maxOutputTokens: number;
  /** INFERENCE_PREFIX_CACHING: reuse any held prefix by content, not only the session's; default true. */
  prefixCaching?: boolean;
  /** INFERENCE_MAX_CHUNK_TOKENS: tokens per TokenChunk at most, and held while the caller does not drain; default 256. */
  maxChunkTokens?: number;
  /** Clock; default `performance.now`. */
  now?: () => number;
}

/** The assembled prompt with what prefix reuse found for it. */
interface PreparedPrompt extends AssembledPrompt {
  /** The part of `cachedTokens` the session (or parent) lookup alone found. */
  sessionCachedTokens: number;
}

/** How one stream ended, for the session, the Done message and the metrics. */
interface StreamResult {
  completion: number[];
  finish: inferenceV1.FinishReason;
  ttftMs: number | undefined;
  /** What the engine reported it really skipped and evaluated, when it keeps its own KV state. */
  prefill?: EnginePrefill;
}

/**
 * InferenceService/Generate: assembles the prompt from the session prefix and the new tokens,
 * streams the engine's tokens with back-pressure, ends with exactly one GenerateDone (or a gRPC
 * error, or nothing when the caller cancelled), then keeps prompt ++ sent tokens for the session.
 */
export class GenerateService {
  private inFlight = 0;
  private readonly active = new Set<AbortController>();
  private idleWaiters: Array<() => void> = [];
  private readonly now: () => number;
  private readonly engineLabel: { engine: string };
  /** GenerateStream's calls; drained with the gRPC server. */
  readonly mux = new MuxServer();
  private readonly slots: SlotScheduler;

  constructor(private readonly options: GenerateServiceOptions) {
    this.now = options.now ?? (() => performance.now());
    this.engineLabel = { engine: options.engine.name };
    this.slots = options.slots ?? new SlotScheduler({ capacity: options.maxConcurrency, waitMs: 0 });
  }

  /** When the latest Generate call arrived (`Date.now()`), if any did: a draining worker waits for callers to move. */
  lastCallAt: number | undefined;

  /** The grpc-js implementation to register (WatchWorkerStats is worker-stats' own). */
  implementation(): Pick<inferenceV1.InferenceServiceServer, 'generate' | 'generateStream' | 'forgetSession'> {
    const arrive = (call: GenerateCall) => {
      this.lastCallAt = Date.now();
      void this.handle(call);
    };
    return {
      generate: arrive,
      generateStream: (stream) =>
        this.mux.serveStreaming<inferenceV1.GenerateRequest, inferenceV1.GenerateResponse>(stream, arrive),
      forgetSession: (call, callback) => callback(null, { forgotten: this.forget(call.request) }),
    };
  }

  /** ForgetSession: drops the session (and its index entries) within the request's salt. */
  forget(request: inferenceV1.ForgetSessionRequest): boolean {
    if (request.sessionKey === '') return false;
    const key = scopedKey(request.cacheSalt, request.sessionKey);
    this.options.engine.forget?.(key);
    return this.options.sessions.delete(key);
  }

  /** Calls in progress. */
  get inFlightCount(): number {
    return this.inFlight;
  }

  /** Resolves once no call is in progress (used when draining). */
  whenIdle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops every call in progress as if its caller had cancelled (the last step of a drain). */
  abortAll(): void {
    for (const controller of this.active) controller.abort();
  }

  private async handle(call: GenerateCall): Promise<void> {
    const arrivedAt = this.now();
    hopTrace.mark('worker.generate.arrived');
    const { metrics } = this.options;
    this.inFlight++;
    const controller = new AbortController();
    this.active.add(controller);
    const onCancelled = () => controller.abort();
    call.on('cancelled', onCancelled);
    let lease: SlotLease | undefined;
    try {
      lease = await this.slots.acquire(call.request.cacheSalt, controller.signal);
      metrics.inFlight.inc(this.engineLabel);
      await this.run(call, arrivedAt, controller.signal);
    } catch (err) {
      if (controller.signal.aborted) {
        this.count('cancelled');
        return;
      }
      const domain = err instanceof DomainError ? err : engineError(err);
      if (!(err instanceof DomainError))
        this.options.logger.error({ err, engine: this.options.engine.name }, 'engine failed');
      this.fail(call, domain, outcomeOf(domain));
    } finally {
      call.off('cancelled', onCancelled);
      this.active.delete(controller);
      this.inFlight--;
      if (lease) {
        lease.release();
        metrics.inFlight.dec(this.engineLabel);
      }
      if (this.inFlight === 0) this.wakeIdleWaiters();
    }
  }

  private async run(call: GenerateCall, arrivedAt: number, signal: AbortSignal): Promise<void> {
    const request = call.request;
    const { metrics } = this.options;
    // Checked before the prompt touches the session cache.
    const constraints = parseConstraints(request.constraints);
    const assembled = this.assemble(request);
    metrics.workerSeconds.observe({ ...this.engineLabel, part: 'prepare' }, (this.now() - arrivedAt) / 1000);
    const result = await this.stream(call, request, assembled, arrivedAt, signal, constraints);
    const cancelled = result.finish === FinishReason.FINISH_REASON_CANCELLED;
    const keepStart = this.now();
    // A cancelled call keeps nothing: the caller may have cancelled because safety blocked the
    // prompt (EDGE_SAFETY_OVERLAP), and a blocked prompt must not stay reusable. A client that
    // went away loses only this call's reuse; its conversation cannot continue from it anyway.
    // Unless the caller says it goes on from it (`Cancel.keep`: its client interrupted or steered a
    // response it had already seen, so the prompt was judged): then the next turn prefills only what it adds.
    const keep = !cancelled || call.keepOnCancel === true;
    if (request.sessionKey !== '' && keep) this.keep(request, assembled, result.completion);
    const cachedTokens = result.prefill?.cachedTokens ?? assembled.cachedTokens;
    this.record(result.prefill ? engineCached(assembled, cachedTokens) : assembled, result);
    metrics.workerSeconds.observe({ ...this.engineLabel, part: 'keep' }, (this.now() - keepStart) / 1000);
    if (cancelled) return;
    const done: inferenceV1.GenerateDone = {
      finishReason: result.finish,
      promptTokens: assembled.prompt.length,
      cachedTokens,
      completionTokens: result.completion.length,
      engineTtftMs: result.ttftMs ?? this.now() - arrivedAt,
    };
    call.write({ event: { $case: 'done', value: done } });
    call.end();
  }

  /**
   * Looks the session up, builds and validates the prompt, then finds the longest prefix any held
   * sequence has (content matching); counts session hits and misses.
   */
  private assemble(request: inferenceV1.GenerateRequest): PreparedPrompt {
    const { sessions, metrics, vocabSize } = this.options;
    if (request.sessionKey === '') {
      // An empty key disables prefix reuse (inference.proto): nothing is looked up or kept.
      validatePromptTokens(request.tokens, request.prefixLen + request.tokens.length, vocabSize);
      const assembled = assemblePrompt(undefined, request.prefixLen, request.tokens, sessions.hasher);
      return { ...assembled, sessionCachedTokens: 0 };
    }
    const seed = saltSeed(request.cacheSalt);
    const held = sessions.lookup(
      scopedKey(request.cacheSalt, request.parentSessionKey !== '' ? request.parentSessionKey : request.sessionKey),
    );
    const hit = held !== undefined && held.tokens.length >= request.prefixLen;
    (hit ? metrics.sessionCacheHits : metrics.sessionCacheMisses).inc(this.engineLabel);
    // Checked before anything is appended to the session's log (only the new tokens: O(new)).
    if (hit) validatePromptTokens(request.tokens, request.prefixLen + request.tokens.length, vocabSize);
    const assembled = assemblePrompt(held, request.prefixLen, request.tokens, sessions.hasher, seed);
    if (!hit) validatePromptTokens(request.tokens, assembled.prompt.length, vocabSize);
    if (assembled.copied) metrics.sequenceCopies.inc(this.engineLabel);
    // prefix_len / prefix_miss concern what the caller may omit; content matching only raises
    // cached_tokens (what the engine need not prefill), as vLLM's and SGLang's prefix caches do.
    const promptHashes = assembled.log.hashes(assembled.prompt.length);
    const match = matchPrefix(
      sessions,
      assembled.prompt,
      promptHashes,
      held,
      assembled.cachedTokens,
      this.options.prefixCaching ?? true,
    );
    return { ...assembled, cachedTokens: match.cachedTokens, sessionCachedTokens: assembled.cachedTokens };
  }

  /**
   * Keeps prompt ++ sent tokens for the session. What was actually sent: whatever the caller
   * received is a prefix of it, so any prefix_len it sends next is served correctly, even after a
   * cancel. The completion is appended to the prompt's log in place: O(completion), and only the
   * blocks it completes are hashed.
   */
  private keep(request: inferenceV1.GenerateRequest, prepared: PreparedPrompt, completion: readonly number[]): void {
    const { sessions } = this.options;
    const { tokens, blockHashes, log } = sessionSequence(prepared, completion);
    // The parent's tokens now live under the new key (a move): a key always names one immutable
    // sequence, so a branch from the parent gets prefix_miss and resends instead of reusing
    // tokens another branch appended (content matching still reuses them as cached_tokens).
    const moveFrom =
      request.parentSessionKey !== '' ? scopedKey(request.cacheSalt, request.parentSessionKey) : undefined;
    // The root is for the router only (WatchWorkerStats); a moved session keeps its parent's.
    const root = request.prefixKey ? { key: request.prefixKey, tokens: prepared.prompt.length } : undefined;
    sessions.set(scopedKey(request.cacheSalt, request.sessionKey), tokens, { blockHashes, moveFrom, log, root });
  }

  private async stream(
    call: GenerateCall,
    request: inferenceV1.GenerateRequest,
    assembled: PreparedPrompt,
    arrivedAt: number,
    signal: AbortSignal,
    constraints: RequestConstraints | undefined,
  ): Promise<StreamResult> {
    const maxOutputTokens = effectiveMaxOutputTokens(request.maxOutputTokens, this.options.maxOutputTokens);
    const stopTokens = new Set([...this.options.profileStopTokens, ...request.stopTokens]);
    const completion: number[] = [];
    let ttftMs: number | undefined;
    let finish: inferenceV1.FinishReason | undefined;
    let prefill: EnginePrefill | undefined;
    let contextFull = false;
    const chunks = this.options.engine.generate({
      prompt: assembled.prompt,
      promptLog: assembled.log,
      cachedTokens: assembled.cachedTokens,
      maxOutputTokens,
      stopTokens,
      temperature: request.sampling?.temperature,
      topP: request.sampling?.topP,
      seed: request.sampling?.seed,
      arrivedAt,
      signal,
      onPromptRead: (ms) =>
        this.options.metrics.workerSeconds.observe({ ...this.engineLabel, part: 'engine_read' }, ms / 1000),
      sessionKey:
        request.parentSessionKey || request.sessionKey
          ? scopedKey(request.cacheSalt, request.parentSessionKey || request.sessionKey)
          : undefined,
      cacheSalt: request.cacheSalt,
      onPrefill: (p) => (prefill = p),
      onContextFull: () => (contextFull = true),
      onAligned: (n) => this.options.metrics.engineAlignedTokens.inc(this.engineLabel, n),
      constraints,
    });
    // The first chunk says what was prefilled, so a caller cut off before Done can bill it; an
    // engine with its own KV state reported its real skip before the first token.
    const writer = new TokenChunkWriter(call, {
      maxChunkTokens: this.options.maxChunkTokens,
      elapsedMs: () => this.now() - arrivedAt,
      firstCounts: () => ({
        promptTokens: assembled.prompt.length,
        cachedTokens: prefill?.cachedTokens ?? assembled.cachedTokens,
      }),
      signal,
      onChunk: (written) => {
        // engine_ttft_ms: the call's arrival to the first chunk written, as the chunk says.
        if (ttftMs === undefined) hopTrace.mark('worker.first.written');
        ttftMs ??= written.engineElapsedMs;
        this.options.metrics.tokenChunks.inc(this.engineLabel);
      },
    });
    try {
      for await (const chunk of chunks) {
        if (signal.aborted) break;
        const limited = limitChunk(chunk, completion.length, maxOutputTokens, stopTokens);
        if (limited.tokens.length > 0) {
          for (const t of limited.tokens) completion.push(t);
          await writer.push(limited.tokens);
        }
        finish = limited.finish;
        // Leaving the loop returns the engine's generator, which frees what it holds.
        if (finish !== undefined || signal.aborted) break;
      }
      // Done goes out after every token: what a drain held is written first.
      await writer.flush();
    } finally {
      writer.close();
    }
    if (signal.aborted) finish = FinishReason.FINISH_REASON_CANCELLED;
    // An engine that ends without a stop token has hit its end of sequence (STOP), or its full context.
    finish ??= contextFull ? FinishReason.FINISH_REASON_LENGTH : FinishReason.FINISH_REASON_STOP;
    return { completion, finish, ttftMs, prefill };
  }

  private record(assembled: PreparedPrompt, result: StreamResult): void {
    const { metrics, sessions } = this.options;
    metrics.promptTokens.inc(this.engineLabel, assembled.prompt.length);
    metrics.cachedTokens.inc(this.engineLabel, assembled.cachedTokens);
    metrics.cachedTokensBySource.inc({ ...this.engineLabel, source: 'session' }, assembled.sessionCachedTokens);
    metrics.cachedTokensBySource.inc(
      { ...this.engineLabel, source: 'content' },
      assembled.cachedTokens - assembled.sessionCachedTokens,
    );
    metrics.completionTokens.inc(this.engineLabel, result.completion.length);
    if (result.prefill) metrics.engineEvaluatedTokens.inc(this.engineLabel, result.prefill.evaluatedTokens);
    if (result.ttftMs !== undefined) metrics.ttft.observe(this.engineLabel, result.ttftMs / 1000);
    metrics.sessionCacheTokens.set(this.engineLabel, sessions.totalTokens);
    metrics.sessionCacheSessions.set(this.engineLabel, sessions.size);
    metrics.prefixIndexBlocks.set(this.engineLabel, sessions.index.size);
    this.count(finishOutcome(result.finish));
    const { logger } = this.options;
    // Per-call lines only at debug: this is the hot path, and prompt content is never logged.
    if (logger.isLevelEnabled('debug')) {
      logger.debug(
        {
          engine: this.options.engine.name,
          promptTokens: assembled.prompt.length,
          cachedTokens: assembled.cachedTokens,
          sessionCachedTokens: assembled.sessionCachedTokens,
          completionTokens: result.completion.length,
          finish: inferenceV1.finishReasonToJSON(result.finish),
          ttftMs: result.ttftMs,
        },
        'generate finished',
      );
    }
  }

  private fail(call: GenerateCall, err: DomainError, outcome: GenerateOutcome): void {
    this.count(outcome);
    this.options.logger.debug({ code: err.code, engine: this.options.engine.name }, 'generate failed');
    // grpc-js turns an 'error' event on a server stream into the call's status and trailers.
    if (!call.cancelled) call.emit('error', toGrpcError(err));
  }

  private count(outcome: GenerateOutcome): void {
    this.options.metrics.requests.inc({ ...this.engineLabel, outcome });
  }

  private wakeIdleWaiters(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }
}

/**
 * The prompt as an engine with its own KV state prefilled it: its skip is the cached count (it may
 * hold less than the session cache after evicting a sequence, or more by content).
 */
function engineCached(prepared: PreparedPrompt, cachedTokens: number): PreparedPrompt {
  return { ...prepared, cachedTokens, sessionCachedTokens: Math.min(prepared.sessionCachedTokens, cachedTokens) };
}

/** Failures counted under their own outcome; every other code is `error`. */
const OUTCOME_BY_CODE: Partial<Record<InternalErrorCode, GenerateOutcome>> = {
  [ErrorCode.prefixMiss]: 'prefix_miss',
  [ErrorCode.invalidPrompt]: 'invalid_prompt',
  [ErrorCode.workerOverloaded]: 'worker_overloaded',
};

function outcomeOf(err: DomainError): GenerateOutcome {
  return OUTCOME_BY_CODE[err.code] ?? 'error';
}

function finishOutcome(finish: inferenceV1.FinishReason): GenerateOutcome {
  if (finish === FinishReason.FINISH_REASON_LENGTH) return 'length';
  if (finish === FinishReason.FINISH_REASON_CANCELLED) return 'cancelled';
  return 'stop';
}

/**
 * The session cache key of `key` under a cache salt: a session key names a sequence only within
 * its salt (tenant), so one tenant's key can never read or move another tenant's session.
 */
export function scopedKey(salt: string, key: string): string {
  return salt === '' ? key : `${salt}\u0000${key}`;
}
