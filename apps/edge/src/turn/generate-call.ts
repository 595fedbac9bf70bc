import { inferenceV1 } from '@fastloop/proto';
import type { OutputParser } from '@fastloop/model-profiles';
import type { OutputSink } from '../safety/output-moderator';
import { applyParseEvents } from './apply-parse-events';
import { cacheSaltOf } from './cache-salt';
import { generateConstraints } from './generate-constraints';
import { planGenerate, type GeneratePlan } from './generate-plan';
import type { Turn } from './turn';

/**
 * What to send for the turn's rendering: only the tokens the worker does not hold yet (`previous`
 * set, same worker), or the whole prompt (`full`: after a prefix miss or on another worker).
 */
export function planFor(turn: Turn, full = false): GeneratePlan {
  const { rendered, profile } = turn.rendering;
  const gen = profile.renderGenerationPrompt();
  const id = turn.writer.response.id;
  return full
    ? planGenerate(id, rendered, gen, undefined, '')
    : planGenerate(id, rendered, gen, turn.req.previous, turn.route.workerId);
}

/** The Generate request of the turn's current plan and route. */
export function generateRequest(turn: Turn, plan: GeneratePlan, maxOutput: number): inferenceV1.GenerateRequest {
  const { req, route, rendering } = turn;
  return {
    sessionKey: plan.sessionKey,
    parentSessionKey: plan.parentSessionKey,
    cacheSalt: cacheSaltOf(req.principal.tenant),
    prefixLen: plan.prefixLength,
    tokens: Array.from(plan.tokens),
    model: route.engineModel,
    sampling: { temperature: req.body.temperature ?? undefined, topP: req.body.top_p ?? undefined },
    maxOutputTokens: maxOutput,
    stopTokens: [...rendering.profile.stopTokens],
    constraints: generateConstraints(rendering.rendered.header),
  };
}

/**
 * Ends an attempt's Generate stream however the attempt was left. Cancelling the call is not
 * enough: a stream that had yielded a chunk nobody asked the next of (the first chunk, read ahead
 * of a verdict that blocked or failed) stays suspended, its call and idle timer held until
 * INFERENCE_IDLE_TIMEOUT_MS (in bench/load, ~390 such calls after 500 loops with the safety
 * service overloaded); one left by an exception was not even cancelled, so the worker kept the
 * call open, blocked on flow control, that long. `return()` runs the stream's cleanup now.
 */
export function endStream(
  call: AbortController,
  stream: AsyncIterator<inferenceV1.GenerateResponse> | undefined,
): void {
  call.abort();
  stream?.return?.(undefined).catch(() => undefined);
}

/** ForgetSession for a call whose prompt must not stay on the worker; failures are only logged. */
export function forgetSession(turn: Turn, plan: GeneratePlan): void {
  const { deps, req, route } = turn;
  deps.backends
    .forgetSession(route.workerAddress, { sessionKey: plan.sessionKey, cacheSalt: cacheSaltOf(req.principal.tenant) })
    .catch((err: unknown) =>
      req.logger.warn({ err, workerId: route.workerId }, 'could not make the worker forget a blocked prompt'),
    );
}

/**
 * Reads Generate streams into the turn: counts every chunk in the meter, parses the tokens into
 * output items on `sink` (the writer, or the output moderator in front of it), and keeps the final
 * message. One reader per turn, across its attempts.
 */
export class OutputReader {
  private readonly parser: OutputParser;
  private itemOpened = false;
  /** The worker's final message, once read. */
  done: inferenceV1.GenerateDone | undefined;

  constructor(
    private readonly turn: Turn,
    private readonly sink: OutputSink,
  ) {
    const { profile, rendered } = turn.rendering;
    this.parser = profile.createOutputParser(rendered.header.tools);
  }

  /** Reads one stream to its end, or until the turn is stopped; `first` is its first chunk, read ahead. */
  async read(
    stream: AsyncIterator<inferenceV1.GenerateResponse>,
    first: Promise<IteratorResult<inferenceV1.GenerateResponse>>,
  ): Promise<void> {
    const { meter, timer, stop } = this.turn;
    for (let r = await first; !r.done; r = await stream.next()) {
      const event = r.value.event;
      if (event?.$case === 'chunk') {
        if (meter.sampled.length === 0) timer.mark('ttft');
        meter.add(event.value, this.sink.currentKind === 'reasoning');
        if (applyParseEvents(this.sink, this.parser.push(event.value.tokens)) && !this.itemOpened) {
          this.itemOpened = true;
          this.recordFirstItem(event.value.engineElapsedMs);
        }
      } else if (event?.$case === 'done') {
        this.done = event.value;
      }
      if (stop.signal.aborted) break;
    }
  }

  /** Writes what the parser still holds (the output ended). */
  finish(): void {
    applyParseEvents(this.sink, this.parser.finish());
  }

  /**
   * The engine's time to the chunk that opened the first output item, and what the edge added
   * around it: from the request reaching the edge (its parse and validation and the
   * `previous_response_id` load, which happen before the timer starts, included) to the item's
   * event, minus the engine.
   */
  private recordFirstItem(engineElapsedMs: number): void {
    if (!(engineElapsedMs > 0)) return; // a worker from before engine_elapsed_ms sends 0: unknown
    const { deps, req, timer } = this.turn;
    const labels = { transport: req.transport, cached: String(req.previous !== undefined) };
    const edgeMs = performance.now() - timer.startedAt + req.validateMs + req.loadMs;
    deps.metrics.engineFirstItemSeconds.observe(labels, engineElapsedMs / 1000);
    deps.metrics.firstItemOverheadSeconds.observe(labels, Math.max(0, edgeMs - engineElapsedMs) / 1000);
  }
}
