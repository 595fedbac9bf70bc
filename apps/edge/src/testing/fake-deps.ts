import { abortedOf } from './aborted-of';
import { getProfile, type ConversationEntry } from '@fastloop/model-profiles';
import { inferenceV1, routerV1, safetyV1 } from '@fastloop/proto';
import { createLogger, DomainError, Registry } from '@fastloop/service-kit';
import type { BackendClients } from '../clients/backend-clients';
import { EdgeMetrics } from '../edge-metrics';
import { HeaderVerdicts } from '../safety/header-verdicts';
import { EntryRenderCache } from '../turn/entry-render-cache';
import type { TurnDeps } from '../turn/turn-deps';

const profile = getProfile('harmony-o200k');

/**
 * In-process stand-ins for safety, router and inference, for unit tests of the session core.
 * They record every call so tests can check what the edge sent (e.g. only new items, only new
 * tokens). The real services are exercised by the e2e suite.
 */
export class FakeBackends {
  readonly classifyCalls: safetyV1.ClassifyRequest[] = [];
  readonly routeCalls: routerV1.RouteRequest[] = [];
  readonly generateCalls: inferenceV1.GenerateRequest[] = [];
  /** Full prompt of each Generate call, reassembled from the fake worker's sessions. */
  readonly prompts: number[][] = [];
  private readonly sessions = new Map<string, number[]>();
  /** What the fake model answers next; default: a call to `read_file`. */
  script: (turn: number) => ConversationEntry = (turn) => ({
    kind: 'function_call',
    name: 'read_file',
    arguments: JSON.stringify({ path: `f${turn}.ts` }),
    callId: '',
  });
  /**
   * When set, what the fake model answers instead of `script`: several entries in one completion
   * (reasoning, then a tool call or an answer), each after the first opened as a new assistant message.
   */
  scriptEntries?: (turn: number) => readonly ConversationEntry[];
  /** Classify blocks any item whose text includes this marker. */
  blockMarker = 'BLOCK-ME';
  /** Classify flags (action flag) any item whose text includes this marker. */
  flagMarker = 'FLAG-ME';
  /** Classify asks to redact (action redact) this marker wherever it occurs. */
  redactMarker = 'REDACT-ME';
  /** What the fake model answers to a prompt, instead of `script` (the same however calls interleave). */
  respond?: (prompt: readonly number[]) => ConversationEntry;
  /** Awaited before each chunk of Generate call `call` (0-based): a test paces or holds a stream. */
  chunkGate?: (call: number, chunk: number) => Promise<void>;
  /** Generate waits for this before its first token (a response still running when a test acts). */
  holdGenerate?: Promise<void>;
  /** Make the next Generate fail with this error before any token. */
  failNextGenerate?: DomainError;
  /**
   * Generate streams started whose cleanup has not run yet. The real client's holds the gRPC call
   * and its idle timer, so one the edge abandons without `return()` lingers until the idle timeout.
   */
  openGenerateStreams = 0;

  /**
   * Like the real service, items are scanned as one text with the tail of earlier calls carried in
   * the state (`<items seen>|<tail>`), so a marker split across items or calls is found.
   */
  async classify(req: safetyV1.ClassifyRequest): Promise<safetyV1.ClassifyResponse> {
    this.classifyCalls.push(req);
    const [seenText, ...tailParts] = req.state.length === 0 ? ['0'] : req.state.toString().split('|');
    const seen = Number(seenText);
    const tail = tailParts.join('|');
    const window = Math.max(this.blockMarker.length, this.flagMarker.length, this.redactMarker.length);
    const text = tail + req.items.map((i) => i.text).join('');
    const itemAt = (pos: number) => {
      let at = tail.length;
      for (let i = 0; i < req.items.length; i++) {
        at += req.items[i].text.length;
        if (pos < at) return { index: seen + i, offset: pos - (at - req.items[i].text.length) };
      }
      return { index: seen + Math.max(0, req.items.length - 1), offset: 0 };
    };
    const find = (marker: string, action: safetyV1.Action): safetyV1.Finding[] => {
      const pos = text.indexOf(marker);
      if (pos < 0) return [];
      const where = itemAt(Math.max(pos, tail.length));
      return [{ ...markerFinding(where.index, where.offset, marker.length), action }];
    };
    const block = find(this.blockMarker, safetyV1.Action.ACTION_BLOCK);
    const itemsSeen = seen + (req.output ? 0 : req.items.length);
    return {
      verdict: block.length > 0 ? safetyV1.Verdict.VERDICT_BLOCK : safetyV1.Verdict.VERDICT_ALLOW,
      state: Buffer.from(`${itemsSeen}|${text.slice(Math.max(0, text.length - (window - 1)))}`),
      findings: [
        ...block,
        ...find(this.flagMarker, safetyV1.Action.ACTION_FLAG),
        ...find(this.redactMarker, safetyV1.Action.ACTION_REDACT),
      ],
      itemsSeen,
      windowChars: window,
      ...(req.output ? { heldChars: req.output.final ? 0 : heldSuffix(text, this.blockMarker) } : {}),
    };
  }

  /** No ModerateStream sessions: output moderation makes Classify calls carrying the state. */
  readonly moderationMux = undefined;
  readonly safetyTimeoutMs = 5_000;

  async route(req: routerV1.RouteRequest): Promise<routerV1.RouteResponse> {
    this.routeCalls.push(req);
    if (req.model !== 'fake-model' && req.model !== 'alias')
      throw new DomainError('model_not_found', 'no such model', 5);
    // Two workers: w2 when the caller excludes w1 (its retry after w1 failed).
    const w = req.excludeWorkerIds?.includes('w1') ? 2 : 1;
    return {
      model: 'fake-model',
      profile: profile.id,
      workerAddress: `fake:${w}`,
      workerId: `w${w}`,
      contextWindow: 131072,
      maxOutputTokens: 4096,
      engineModel: 'fake-model',
    };
  }

  async listModels(): Promise<routerV1.ListModelsResponse> {
    return {
      models: [{ id: 'fake-model', ownedBy: 'test', created: 0, aliases: [], contextWindow: 131072, profile: '' }],
    };
  }

  async *generate(
    address: string,
    req: inferenceV1.GenerateRequest,
    signal?: AbortSignal,
  ): AsyncGenerator<inferenceV1.GenerateResponse> {
    this.openGenerateStreams++;
    try {
      await this.holdGenerate;
      yield* this.stream(address, req, signal);
    } finally {
      this.openGenerateStreams--;
    }
  }

  private async *stream(
    _address: string,
    req: inferenceV1.GenerateRequest,
    signal?: AbortSignal,
  ): AsyncGenerator<inferenceV1.GenerateResponse> {
    this.generateCalls.push(req);
    const failure = this.failNextGenerate;
    this.failNextGenerate = undefined;
    if (failure) throw failure;
    const parent = this.sessions.get(req.parentSessionKey || req.sessionKey);
    if (req.prefixLen > 0 && (!parent || parent.length < req.prefixLen))
      throw new DomainError('prefix_miss', 'no prefix', 9, true);
    const prompt = [...(parent ?? []).slice(0, req.prefixLen), ...req.tokens];
    this.prompts.push(prompt);
    let cached = 0;
    while (parent && cached < parent.length && cached < prompt.length && parent[cached] === prompt[cached]) cached++;
    const turn = this.generateCalls.length - 1;
    const completion = this.respond
      ? profile.renderCompletion(this.respond(prompt))
      : this.scriptEntries
        ? this.scriptEntries(turn).flatMap((e, i) => [
            ...(i > 0 ? profile.renderGenerationPrompt() : []),
            ...profile.renderCompletion(e),
          ])
        : profile.renderCompletion(this.script(turn));
    this.sessions.set(req.sessionKey, [...prompt, ...completion]);
    if (req.parentSessionKey) this.sessions.delete(req.parentSessionKey);
    // Stream in uneven chunks, as a real worker does.
    // engine_elapsed_ms as a worker reports it: here 10 ms per chunk.
    // The first chunk says what was prefilled, as a worker does.
    for (let i = 0; i < completion.length; i += 3) {
      // A caller that cancels sees a cancelled call, as from grpc-js.
      await Promise.resolve();
      // A held chunk still sees a cancel at once, as a real stream does.
      if (this.chunkGate) await Promise.race([this.chunkGate(turn, i / 3), abortedOf(signal)]);
      if (signal?.aborted) throw new DomainError('cancelled', 'cancelled by the caller', 1);
      const first = i === 0;
      const value = {
        tokens: completion.slice(i, i + 3),
        engineElapsedMs: 10 * (i / 3 + 1),
        promptTokens: first ? prompt.length : 0,
        cachedTokens: first ? cached : 0,
      };
      yield { event: { $case: 'chunk', value } };
    }
    yield {
      event: {
        $case: 'done',
        value: {
          finishReason: inferenceV1.FinishReason.FINISH_REASON_STOP,
          promptTokens: prompt.length,
          cachedTokens: cached,
          completionTokens: completion.length,
          engineTtftMs: 0,
        },
      },
    };
  }

  /** Sessions the edge asked the worker to forget. */
  readonly forgotten: inferenceV1.ForgetSessionRequest[] = [];

  async forgetSession(
    _address: string,
    req: inferenceV1.ForgetSessionRequest,
  ): Promise<inferenceV1.ForgetSessionResponse> {
    this.forgotten.push(req);
    return { forgotten: this.sessions.delete(req.sessionKey) };
  }

  close(): void {}
}

/** Output moderation's frontier for one marker: the longest end of `text` that could begin it. */
function heldSuffix(text: string, marker: string): number {
  for (let n = Math.min(text.length, marker.length - 1); n > 0; n--) if (marker.startsWith(text.slice(-n))) return n;
  return 0;
}

function markerFinding(itemIndex: number, start: number, length: number): safetyV1.Finding {
  return {
    ruleId: 'marker',
    itemIndex,
    message: 'marker found',
    category: safetyV1.Category.CATEGORY_POLICY,
    action: safetyV1.Action.ACTION_BLOCK,
    start,
    endItemIndex: itemIndex,
    end: start + length,
    score: 0,
    provisional: false,
  };
}

/** TurnDeps over FakeBackends with silent logs and a private metrics registry. */
export function fakeDeps(
  backends = new FakeBackends(),
  safetyOverlap = true,
): { deps: TurnDeps; backends: FakeBackends; usage: unknown[]; registry: Registry } {
  const registry = new Registry();
  const usage: unknown[] = [];
  const deps: TurnDeps = {
    backends: backends as unknown as BackendClients,
    metrics: new EdgeMetrics(registry),
    logger: createLogger({ service: 'edge-test', level: 'silent' }),
    renderCache: new EntryRenderCache(1000),
    headerVerdicts: new HeaderVerdicts(),
    usage: { enqueue: (r) => usage.push(r) },
    safetyOverlap,
  };
  return { deps, backends, usage, registry };
}
