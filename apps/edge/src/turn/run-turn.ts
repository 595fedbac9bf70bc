import { status as GrpcStatus } from '@grpc/grpc-js';
import { turnAccess, type TurnAccess } from '../access-log';
import { inferenceV1 } from '@fastloop/proto';
import {
  ApiError,
  createUsage,
  newId,
  type InputItem,
  type OutputItem,
  type ResponseStreamEvent,
  type Usage,
} from '@fastloop/protocol';
import { DomainError } from '@fastloop/service-kit';
import { StageTimer } from '../edge-metrics';
import type { ConversationState, RouteDecision } from './conversation-state';
import { approxBytes } from './conversation-state';
import { planGenerate, type GeneratePlan } from './generate-plan';
import { backendError, prepareTurn, routeFresh, type PreparedTurn, type SafetyResult } from './prepare-turn';
import { appendEntries } from './render-conversation';
import { itemsToEntries } from './item-conversion';
import type { TurnDeps, TurnRequest } from './turn-deps';
import { TurnWriter } from './turn-writer';
import { recordNoticed } from '../safety/safety-findings';
import { finishModeration, moderatorFor } from '../safety/moderate-turn';
import type { OutputSink } from '../safety/output-moderator';
import { cacheSaltOf } from './cache-salt';
import { generateConstraints } from './generate-constraints';
import { applyParseEvents } from './apply-parse-events';
import { prefixKeyOf } from './route-hints';

/**
 * Errors before the first token after which the turn is sent once more, to another worker: the
 * worker is gone or draining (`unavailable`, a broken stream's `internal`, a stream that ended
 * without a result), full (`worker_overloaded`), or its engine failed (`engine_error`).
 */
const RETRY_ELSEWHERE: ReadonlySet<string> = new Set([
  'unavailable',
  'worker_overloaded',
  'engine_error',
  'internal',
  'inference_incomplete',
]);

/** The result of a turn that got as far as `response.created`. */
export interface TurnOutcome {
  /** The final Response object (as in the terminal event). */
  response: TurnWriter['response'];
  /** What the transport's access line says of this turn (access-log.ts). */
  access: TurnAccess;
  /** State a continuation can chain from; absent when the turn failed. */
  state?: ConversationState;
  /** Why the turn failed after `response.created` (the response's status is then `failed`). */
  error?: ApiError;
}

/**
 * The one implementation of a turn, shared by HTTP, SSE, WebSocket and gRPC bidi. Errors the client
 * must fix are thrown as ApiError before any event is emitted; once `response.created` is out, every
 * failure ends in exactly one terminal event. Usage and storage happen after the terminal event.
 */
export async function runTurn(
  deps: TurnDeps,
  req: TurnRequest,
  emit: (event: ResponseStreamEvent) => void,
): Promise<TurnOutcome> {
  const timer = new StageTimer(deps.metrics, req.transport, req.previous !== undefined);
  const prepared = await prepareTurn(deps, req, timer);
  // Decided before response.created, so every event and the final object say whether it is stored.
  const storing = req.body.store !== false && deps.store !== undefined && deps.store.accepting?.() !== false;
  const body = storing || req.body.store === false ? req.body : { ...req.body, store: false };
  const seal = deps.reasoningSeal;
  const sealReasoning =
    seal && body.include?.includes('reasoning.encrypted_content')
      ? (text: string) => seal.seal(text, req.principal.tenant)
      : undefined;
  const writer = new TurnWriter(
    body,
    { id: newId('resp'), model: prepared.route.model, previousResponseId: req.previous?.response.id },
    emit,
    sealReasoning,
  );
  let verdict: SafetyResult | undefined;
  // The turn as the model reads it: `prepared`, or a copy with redacted spans masked.
  let turn = prepared;
  // Nothing reaches the client before the safety verdict: a blocked prompt is an error, not a response.
  const open = async (): Promise<PreparedTurn> => {
    // Overlapping: let the Generate call reach the socket before the classifier request is built.
    if (deps.safetyOverlap && req.generate) await new Promise<void>((resolve) => setImmediate(resolve));
    verdict = await prepared.safety();
    timer.mark('safety');
    turn = prepared.redact(verdict.noticed.filter((n) => n.source === 'input').map((n) => n.finding)) ?? prepared;
    recordNoticed(deps.metrics, req.logger, writer.response, verdict.noticed);
    writer.created();
    return turn;
  };
  const meter = newMeter(prepared.rendered.tokens.length + prepared.profile.renderGenerationPrompt().length);
  let usage: Usage = meterUsage(meter);
  let plan: GeneratePlan | undefined;
  let route = prepared.route;
  try {
    if (prepared.contextOverflow) {
      await open();
      meter.promptTokens = 0; // nothing reached a worker: nothing was prefilled or sampled
      throw prepared.contextOverflow;
    }
    if (req.generate) {
      ({ usage, plan, route } = await streamTokens(deps, req, prepared, writer, timer, open, meter));
    } else {
      // generate: false primes the connection cache only; nothing is sampled or prefilled.
      await open();
      usage = zeroUsage(0);
      writer.completed(usage);
    }
  } catch (err) {
    if (!verdict) throw err; // before response.created: the transport answers with an error
    const apiErr = toApiError(err);
    req.logger.warn({ err, code: apiErr.code }, 'turn failed after response.created');
    // Billed for what was prefilled and generated before the failure (a client that disconnects
    // just before the end pays for the tokens it cost).
    writer.failed(apiErr);
    deps.metrics.turns.inc({ transport: req.transport, cached: String(!!req.previous), status: 'failed' });
    afterTerminal(deps, req, writer, undefined, meterUsage(meter), timer, false);
    return { response: writer.response, error: apiErr, access: accessOf(req, writer, meterUsage(meter), timer) };
  }
  timer.mark('stream');
  deps.metrics.turns.inc({ transport: req.transport, cached: String(!!req.previous), status: writer.response.status });
  // Post-terminal work runs whatever one step throws: a state that cannot be built (so cannot be
  // continued from the connection cache) is still billed and still stored.
  let state: ConversationState | undefined;
  let stored: ConversationState | undefined;
  try {
    state = buildState(req, turn, verdict!, writer, route, plan, meter.sampled);
    stored = state;
  } catch (err) {
    req.logger.error({ err }, 'building the continuation state failed; the response is stored without it');
    stored = storeOnlyState(req, turn, verdict!, writer, route);
  }
  afterTerminal(deps, req, writer, stored, usage, timer, storing);
  return { response: writer.response, state, access: accessOf(req, writer, usage, timer) };
}

/** The turn's access fields: its stages so far and its time from validation to the terminal event. */
function accessOf(req: TurnRequest, writer: TurnWriter, usage: Usage, timer: StageTimer): TurnAccess {
  const turnMs = (req.validateMs ?? 0) + (req.loadMs ?? 0) + performance.now() - timer.startedAt;
  return turnAccess(writer.response, usage, timer.stages, turnMs);
}

/** What a turn has cost so far, kept up to date while it streams (billed even if it fails). */
interface UsageMeter {
  sampled: number[];
  reasoningTokens: number;
  /** The prompt's length; the worker's own count once its first chunk says so. */
  promptTokens: number;
  cachedTokens: number;
}

function newMeter(promptTokens: number): UsageMeter {
  return { sampled: [], reasoningTokens: 0, promptTokens, cachedTokens: 0 };
}

function meterUsage(m: UsageMeter): Usage {
  return createUsage({
    inputTokens: m.promptTokens,
    cachedTokens: m.cachedTokens,
    outputTokens: m.sampled.length,
    reasoningTokens: m.reasoningTokens,
  });
}

interface StreamResult {
  usage: Usage;
  plan: GeneratePlan;
  route: RouteDecision;
}

/**
 * Calls Generate (with the prefix_miss and dead-worker retries) and streams the parsed output.
 * With `deps.safetyOverlap` the call starts before the safety verdict, so the classifier's round
 * trip hides under the engine's time to first token; a blocked prompt cancels the call before any
 * token is read. Without it, the verdict comes first and nothing reaches a worker before it.
 */
async function streamTokens(
  deps: TurnDeps,
  req: TurnRequest,
  prepared: PreparedTurn,
  writer: TurnWriter,
  timer: StageTimer,
  open: () => Promise<PreparedTurn>,
  meter: UsageMeter,
): Promise<StreamResult> {
  const gen = prepared.profile.renderGenerationPrompt();
  let route = prepared.route;
  let plan = planGenerate(writer.response.id, prepared.rendered, gen, req.previous, route.workerId);
  const parser = prepared.profile.createOutputParser(prepared.rendered.header.tools);
  // Output moderation stops generation through this when the output is blocked.
  const stopped = new AbortController();
  const moderator = moderatorFor(deps, req, writer, () => stopped.abort());
  const sink: OutputSink = moderator ?? writer;
  const sampled = meter.sampled;
  let done: inferenceV1.GenerateDone | undefined;
  let opened = false;
  let itemOpened = false;
  if (!deps.safetyOverlap) {
    prepared = await open();
    plan = planGenerate(writer.response.id, prepared.rendered, gen, req.previous, route.workerId);
    opened = true;
  }
  const maxOutput = Math.min(req.body.max_output_tokens ?? route.maxOutputTokens, route.maxOutputTokens);
  for (let attempt = 0; ; attempt++) {
    const call = new AbortController();
    const onAbort = () => call.abort();
    req.signal.addEventListener('abort', onAbort, { once: true });
    stopped.signal.addEventListener('abort', onAbort, { once: true });
    let stream: AsyncIterator<inferenceV1.GenerateResponse> | undefined;
    try {
      const request = toGenerateRequest(req, route, plan, maxOutput, prepared);
      stream = deps.backends.generate(route.workerAddress, request, call.signal)[Symbol.asyncIterator]();
      const first = stream.next();
      first.catch(() => undefined); // read below, after the verdict
      timer.mark('queue');
      if (!opened) {
        const judged = await open().catch((err: unknown) => {
          call.abort();
          // The worker may have finished (and kept the prompt) before the verdict: a blocked
          // prompt must not stay reusable, so it drops what this call left.
          forgetSession(deps, req, route, plan);
          throw err;
        });
        opened = true;
        if (judged !== prepared) {
          // Redacted: the call in flight has the unmasked prompt. Cancel it before any token is
          // read and send the masked one (a restart, not a retry: retries stay available).
          call.abort();
          prepared = judged;
          plan = planGenerate(writer.response.id, prepared.rendered, gen, req.previous, route.workerId);
          attempt--;
          continue;
        }
      }
      for (let r = await first; !r.done; r = await stream.next()) {
        const event = r.value.event;
        if (event?.$case === 'chunk') {
          if (sampled.length === 0) timer.mark('ttft');
          const tokens = event.value.tokens;
          if (event.value.promptTokens > 0) {
            meter.promptTokens = event.value.promptTokens;
            meter.cachedTokens = event.value.cachedTokens;
          }
          for (const t of tokens) sampled.push(t);
          if (sink.currentKind === 'reasoning') meter.reasoningTokens += tokens.length;
          if (applyParseEvents(sink, parser.push(tokens)) && !itemOpened) {
            itemOpened = true;
            recordFirstItem(deps, req, timer, event.value.engineElapsedMs);
          }
        } else if (event?.$case === 'done') {
          done = event.value;
        }
        if (stopped.signal.aborted) break;
      }
      // A stream that ended before its first token without a result: the worker went away.
      if (!done && sampled.length === 0 && !stopped.signal.aborted && !req.signal.aborted) throw incomplete();
      break;
    } catch (err) {
      if (stopped.signal.aborted) break; // output moderation blocked (or failed): finishModeration says which
      const e = err instanceof DomainError ? err : undefined;
      if (!opened || sampled.length > 0 || attempt > 0 || !e || req.signal.aborted) throw err;
      if (e.code === 'prefix_miss') {
        deps.metrics.prefixMisses.inc();
        plan = fullPlan(prepared, gen, writer.response.id);
      } else if (RETRY_ELSEWHERE.has(e.code)) {
        // The worker died, drains, is full or failed before the first token: the turn goes to
        // another worker (never this one again), which prefills it in full, invisibly to the client.
        deps.routeCache?.forgetWorker(route.workerId);
        deps.metrics.workerRetries.inc({ code: e.code });
        route = await routeFresh(deps, req, req.body.model, [route.workerId]);
        plan = fullPlan(prepared, gen, writer.response.id);
      } else throw err;
    } finally {
      req.signal.removeEventListener('abort', onAbort);
      stopped.signal.removeEventListener('abort', onAbort);
      endStream(call, stream);
    }
  }
  if (!stopped.signal.aborted) applyParseEvents(sink, parser.finish());
  if (moderator && !(await finishModeration(deps, req, writer, moderator))) {
    const usage = meterUsage(meter);
    writer.incomplete(usage, 'content_filter');
    return { usage, plan, route };
  }
  if (!done) throw incomplete();
  const usage = createUsage({
    inputTokens: done.promptTokens,
    cachedTokens: done.cachedTokens,
    outputTokens: done.completionTokens,
    reasoningTokens: meter.reasoningTokens,
  });
  if (done.finishReason === inferenceV1.FinishReason.FINISH_REASON_LENGTH)
    writer.incomplete(usage, 'max_output_tokens');
  else writer.completed(usage);
  return { usage, plan, route };
}

function incomplete(): DomainError {
  return new DomainError(
    'inference_incomplete',
    'the inference stream ended without a result',
    GrpcStatus.UNAVAILABLE,
    true,
  );
}

/**
 * Ends an attempt's Generate stream however the attempt was left. Cancelling the call is not
 * enough: a stream that had yielded a chunk nobody asked the next of (the first chunk, read ahead
 * of a verdict that blocked or failed) stays suspended, its call and idle timer held until
 * INFERENCE_IDLE_TIMEOUT_MS (in bench/load, ~390 such calls after 500 loops with the safety
 * service overloaded); one left by an exception was not even cancelled, so the worker kept the
 * call open, blocked on flow control, that long. `return()` runs the stream's cleanup now.
 */
function endStream(call: AbortController, stream: AsyncIterator<inferenceV1.GenerateResponse> | undefined): void {
  call.abort();
  stream?.return?.(undefined).catch(() => undefined);
}

/** ForgetSession for a call whose prompt must not stay on the worker; failures are only logged. */
function forgetSession(deps: TurnDeps, req: TurnRequest, route: RouteDecision, plan: GeneratePlan): void {
  deps.backends
    .forgetSession(route.workerAddress, { sessionKey: plan.sessionKey, cacheSalt: cacheSaltOf(req.principal.tenant) })
    .catch((err: unknown) =>
      req.logger.warn({ err, workerId: route.workerId }, 'could not make the worker forget a blocked prompt'),
    );
}

/**
 * The engine's time to the chunk that opened the first output item, and what the edge added around
 * it: from the request reaching the edge (its parse and validation and the `previous_response_id`
 * load, which happen before the timer starts, included) to the item's event, minus the engine.
 */
function recordFirstItem(deps: TurnDeps, req: TurnRequest, timer: StageTimer, engineElapsedMs: number): void {
  if (!(engineElapsedMs > 0)) return; // a worker from before engine_elapsed_ms sends 0: unknown
  const labels = { transport: req.transport, cached: String(req.previous !== undefined) };
  const edgeMs = performance.now() - timer.startedAt + req.validateMs + req.loadMs;
  deps.metrics.engineFirstItemSeconds.observe(labels, engineElapsedMs / 1000);
  deps.metrics.firstItemOverheadSeconds.observe(labels, Math.max(0, edgeMs - engineElapsedMs) / 1000);
}

function fullPlan(prepared: PreparedTurn, gen: readonly number[], responseId: string): GeneratePlan {
  return planGenerate(responseId, prepared.rendered, gen, undefined, '');
}

function toGenerateRequest(
  req: TurnRequest,
  route: RouteDecision,
  plan: GeneratePlan,
  maxOutput: number,
  prepared: PreparedTurn,
): inferenceV1.GenerateRequest {
  return {
    sessionKey: plan.sessionKey,
    parentSessionKey: plan.parentSessionKey,
    cacheSalt: cacheSaltOf(req.principal.tenant),
    prefixLen: plan.prefixLength,
    tokens: Array.from(plan.tokens),
    model: route.engineModel,
    sampling: { temperature: req.body.temperature ?? undefined, topP: req.body.top_p ?? undefined },
    maxOutputTokens: maxOutput,
    stopTokens: [...prepared.profile.stopTokens],
    constraints: generateConstraints(req.body, prepared.rendered.header),
    // A fresh session names its conversation root for the router; a continuation inherits it.
    prefixKey: plan.parentSessionKey === '' ? prefixKeyOf(req.body) : undefined,
  };
}

/** The state a continuation chains from: this turn's items plus the output, rendered. */
function buildState(
  req: TurnRequest,
  prepared: PreparedTurn,
  safety: SafetyResult,
  writer: TurnWriter,
  route: RouteDecision,
  plan: GeneratePlan | undefined,
  sampled: number[],
): ConversationState {
  const output: readonly InputItem[] = writer.response.output;
  // The same conversion as for input items: a state rebuilt from the store renders identically.
  const outputEntries = itemsToEntries(output, prepared.calls);
  const rendered = appendEntries(prepared.profile, prepared.rendered, outputEntries);
  const newItems = output;
  return {
    response: writer.response,
    tenant: req.principal.tenant,
    items: prepared.items.append(newItems),
    entries: prepared.entries.append(outputEntries),
    rendered,
    calls: prepared.calls,
    safetyState: safety.state,
    safetyItems: safety.itemsSeen,
    redacted: prepared.redacted || req.previous?.redacted === true,
    route,
    workerPrefixLength: plan && route.workerId ? plan.promptLength : 0,
    sampled,
    // What this state adds beyond its parent's shared logs: its input, output and their tokens.
    bytes:
      approxBytes(req.body.input) +
      approxBytes(output) +
      (rendered.tokens.length - (req.previous?.rendered.tokens.length ?? 0)) * 4 +
      sampled.length * 8,
  };
}

/**
 * Usage enqueue and store write: after the terminal event went out, never on the turn's path.
 * Each step is guarded on its own, so a failure in one never skips the other.
 */
function afterTerminal(
  deps: TurnDeps,
  req: TurnRequest,
  writer: TurnWriter,
  state: ConversationState | undefined,
  usage: Usage,
  timer: StageTimer,
  storing: boolean,
): void {
  setImmediate(() => {
    const start = performance.now();
    const r = writer.response;
    guarded(req, 'usage record', () =>
      deps.usage.enqueue({
        responseId: r.id,
        tenant: req.principal.tenant,
        model: r.model,
        inputTokens: usage.input_tokens,
        cachedTokens: usage.input_tokens_details.cached_tokens,
        outputTokens: usage.output_tokens,
        reasoningTokens: usage.output_tokens_details.reasoning_tokens,
        completedAtMs: Date.now(),
        transport: req.transport,
        status: r.status ?? 'completed',
      }),
    );
    if (state && storing)
      guarded(req, 'store write', () => deps.store!.save(state, req.previous ? req.previous.items.length : 0));
    timer.record('post', performance.now() - start);
  });
}

function guarded(req: TurnRequest, step: string, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    req.logger.error({ err, step }, 'post-response step failed');
  }
}

/**
 * The state stored when the full one could not be built: the items and the response (what the
 * store keeps and a continuation from the store rebuilds from), nothing held on a worker.
 */
function storeOnlyState(
  req: TurnRequest,
  prepared: PreparedTurn,
  safety: SafetyResult,
  writer: TurnWriter,
  route: RouteDecision,
): ConversationState {
  return {
    response: writer.response,
    tenant: req.principal.tenant,
    items: prepared.items.append(writer.response.output as unknown as InputItem[]),
    entries: prepared.entries,
    rendered: prepared.rendered,
    calls: prepared.calls,
    safetyState: safety.state,
    safetyItems: safety.itemsSeen,
    redacted: prepared.redacted || req.previous?.redacted === true,
    route,
    workerPrefixLength: 0,
    sampled: [],
    bytes: 0,
  };
}

function zeroUsage(input: number): Usage {
  return createUsage({ inputTokens: input, outputTokens: 0 });
}

/** Maps any failure after `response.created` to the error a client sees in `response.failed`. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return backendError('inference', err) as ApiError;
}
