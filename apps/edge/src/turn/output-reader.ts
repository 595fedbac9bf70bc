import { status as GrpcStatus } from '@grpc/grpc-js';
import { inferenceV1 } from '@fastloop/proto';
import { DomainError, ErrorCode } from '@fastloop/service-kit';
import { failureOf } from '../api-errors';
import { moderationCalls, type ModerationCalls } from '../clients/moderation-session';
import { OutputModerator, type OutputModeratorOptions } from '../safety/output-moderator';
import { ownedCopy } from '../safety/owned-copy';
import { recordNoticed } from '../safety/safety-findings';
import { applyParseEvents } from './apply-parse-events';
import { stopReasonOf, type StopReason, type Turn } from './turn';
import type { ResponseEnding } from './turn-writer';

/** How a turn that generated to its end ends (failures throw instead). */
export type Ending = Exclude<ResponseEnding, { status: 'failed' }>;

/**
 * Reads a Generate stream into the turn, to its end or until the turn is stopped: counts every
 * chunk in the meter, parses its tokens into output items on the writer (through the output
 * moderator when moderation is on: text is released once judged, and a block stops generation),
 * then finishes the output. `first` is the stream's first chunk, read ahead. Resolves how the
 * response ends; throws what the stream or moderation failed with (moderation fails closed).
 */
export async function readOutput(
  turn: Turn,
  stream: AsyncIterator<inferenceV1.GenerateResponse>,
  first: Promise<IteratorResult<inferenceV1.GenerateResponse>>,
): Promise<Ending> {
  const { meter, timer, stop, rendering } = turn;
  const calls = turn.deps.outputModeration ? moderationCallsOf(turn) : undefined;
  const moderator = calls && moderatorFor(turn, calls.classify);
  const sink = moderator ?? turn.writer;
  const parser = rendering.profile.createOutputParser(rendering.rendered.header.tools);
  let done: inferenceV1.GenerateDone | undefined;
  let itemOpened = false;
  try {
    for (let r = await first; !r.done; r = await stream.next()) {
      const event = r.value.event;
      if (event?.$case === 'chunk') {
        if (meter.sampled.length === 0) timer.mark('ttft');
        meter.add(event.value, sink.currentKind === 'reasoning');
        turn.timing?.chunk(event.value);
        if (applyParseEvents(sink, parser.push(event.value.tokens)) && !itemOpened) {
          itemOpened = true;
          recordFirstItem(turn, event.value.engineElapsedMs);
        }
        // A safe boundary for steering: no item is open, so the response ends with whole items only.
        if (turn.steerRequested && sink.currentKind === null) stop.abort('steered' satisfies StopReason);
      } else if (event?.$case === 'done') done = event.value;
      if (stop.signal.aborted) break;
    }
  } catch (err) {
    if (stop.signal.aborted) moderator?.close();
    else moderator?.abandon(); // the turn fails with err: its response ends before any verdict to come
    calls?.close();
    if (!stop.signal.aborted) throw err; // stopped: output moderation blocked (or failed), said below
  }
  if (!stop.signal.aborted) applyParseEvents(sink, parser.finish());
  // Held text is judged and released before the terminal event, however the stream ended: a
  // verdict arriving after it would write into an ended response.
  const released = moderator ? await finishModeration(turn, moderator).finally(() => calls?.close()) : true;
  if (!released) return { status: 'incomplete', usage: meter.usage(), reason: 'content_filter' };
  // The client stopped it: what it has is what it keeps (the writer drops an interrupted partial item).
  const stopped = stopReasonOf(stop);
  if (stopped) return { status: 'incomplete', usage: meter.usage(), reason: stopped };
  if (!done)
    throw new DomainError(
      ErrorCode.inferenceIncomplete,
      'the inference stream ended without a result',
      GrpcStatus.UNAVAILABLE,
      true,
    );
  const usage = meter.finalUsage(done);
  return done.finishReason === inferenceV1.FinishReason.FINISH_REASON_LENGTH
    ? { status: 'incomplete', usage, reason: 'max_output_tokens' }
    : { status: 'completed', usage };
}

/** One response's output moderation calls: a ModerateStream session, or Classify calls. */
function moderationCallsOf(turn: Turn): ModerationCalls {
  const { backends } = turn.deps;
  const { signal } = turn.req;
  const settings = { deadlineMs: backends.safetyTimeoutMs, signal };
  return moderationCalls(backends.moderationMux, settings, (r) => backends.classify(r, signal));
}

/** The turn's output moderator (moderation is on); a block stops generation. */
function moderatorFor(turn: Turn, classify: OutputModeratorOptions['classify']): OutputModerator {
  const { deps, req } = turn;
  const options = deps.outputModeration!;
  return new OutputModerator(turn.writer, {
    classify,
    tenant: req.principal.tenant,
    // The router's canonical model, as for the input: a model's policy holds under every alias.
    model: turn.route.model,
    inputState: inputStateOf(turn),
    flushMs: options.flushMs,
    flushChars: options.flushChars,
    // moderationCalls orders the calls, so several may be in flight.
    inFlight: options.inFlight,
    onBlock: () => turn.stop.abort(),
  });
}

/** The state the turn's input was judged to (read once judged: the output is read after the verdict). */
function inputStateOf(turn: Turn): () => Promise<Buffer> {
  return () =>
    turn.safety
      ? Promise.resolve(turn.safety.state)
      : Promise.reject(
          new DomainError(ErrorCode.internal, 'output moderation before the verdict', GrpcStatus.INTERNAL),
        );
}

/**
 * Judges and releases the rest of the output; records what was flagged or blocked. Resolves
 * false when the output was blocked (the response then ends `incomplete`, `content_filter`).
 */
async function finishModeration(turn: Turn, moderator: OutputModerator): Promise<boolean> {
  const { deps, req } = turn;
  const released = await moderator.finish().catch(failureOf('safety'));
  recordNoticed(
    deps.metrics,
    req.logger,
    turn.writer.response,
    moderator.flagged.map((finding) => ({ source: 'output' as const, finding })),
  );
  // The guard's session moved on with the output (a worker's session key is consumed by the call
  // that extends it): the next turn continues from the output's state, not the input's.
  if (released && moderator.finalState && turn.safety)
    turn.safety = { ...turn.safety, state: ownedCopy(moderator.finalState) };
  if (!released) {
    const f = moderator.blocked;
    deps.metrics.outputBlocks.inc({ rule: f?.ruleId ?? 'unknown' });
    req.logger.warn({ rule: f?.ruleId, category: f?.category }, 'output blocked by safety');
  }
  return released;
}

/**
 * The engine's time to the chunk that opened the first output item, and what the edge added around
 * it: from the request reaching the edge (its parse and validation and the `previous_response_id`
 * load, which happen before the timer starts, included) to the item's event, minus the engine.
 */
function recordFirstItem(turn: Turn, engineElapsedMs: number): void {
  if (!(engineElapsedMs > 0)) return; // a worker from before engine_elapsed_ms sends 0: unknown
  const { deps, req, timer } = turn;
  const labels = { transport: req.transport, cached: String(req.previous !== undefined) };
  const edgeMs = performance.now() - timer.startedAt + req.validateMs + req.loadMs;
  deps.metrics.engineFirstItemSeconds.observe(labels, engineElapsedMs / 1000);
  deps.metrics.firstItemOverheadSeconds.observe(labels, Math.max(0, edgeMs - engineElapsedMs) / 1000);
}
