import type { inferenceV1 } from '@fastloop/proto';
import {
  CALL_DONE,
  ErrorCode,
  errorCodeOf,
  KEEP_ON_CANCEL,
  type InternalErrorCode,
  hopTrace,
} from '@fastloop/service-kit';
import { cacheSaltOf } from './cache-salt';
import { generateConstraints } from './generate-constraints';
import { planFor, type GeneratePlan } from './generate-plan';
import { judge } from './judge-stage';
import { readOutput, type Ending } from './output-reader';
import { prefixKeyOf } from './route-hints';
import { routeFresh } from './route-stage';
import { stopReasonOf, type Turn } from './turn';

/** Makes the next attempt different: what a retryable failure (its code) of the first attempt calls for. */
type Retry = (turn: Turn, code: InternalErrorCode) => Promise<void> | void;

/**
 * Failures retried once, before any token was read: the worker lost the prefix (resend the whole
 * prompt), or it is gone or draining (`unavailable`, a broken stream's `internal`, a stream that
 * ended without a result), full (`worker_overloaded`) or its engine failed (`engine_error`): the
 * turn goes to another worker, never this one again, with the whole prompt.
 */
const RETRIES: Partial<Record<InternalErrorCode, Retry>> = {
  [ErrorCode.prefixMiss]: (turn) => {
    turn.deps.metrics.prefixMisses.inc();
    turn.resendWhole = true;
  },
  [ErrorCode.unavailable]: rerouteElsewhere,
  [ErrorCode.workerOverloaded]: rerouteElsewhere,
  [ErrorCode.engineError]: rerouteElsewhere,
  [ErrorCode.internal]: rerouteElsewhere,
  [ErrorCode.inferenceIncomplete]: rerouteElsewhere,
};

/** Sends the turn to another worker (invisibly to the client), which prefills it in full. */
async function rerouteElsewhere(turn: Turn, code: InternalErrorCode): Promise<void> {
  const { deps, req, route } = turn;
  deps.routeCache?.forgetWorker(route.workerId);
  deps.metrics.workerRetries.inc({ code });
  turn.route = await routeFresh(deps, req, [route.workerId]);
  turn.resendWhole = true;
}

/**
 * The generate stage: calls Generate (with the retries above) and streams the parsed output to
 * the client. A turn still `preparing` (safety overlap) makes its call before the verdict, so the
 * classifier's round trip hides under the engine's time to first token; a blocked prompt cancels
 * the call before any token is read. A judged turn's call carries a prompt safety allowed.
 */
export async function generate(turn: Turn): Promise<Ending> {
  const { req, route } = turn;
  const maxOutput = Math.min(req.body.max_output_tokens ?? route.maxOutputTokens, route.maxOutputTokens);
  for (let attempt = 0; ; attempt++) {
    try {
      const read = await attemptOnce(turn, maxOutput);
      if (read !== 'restart') return read;
      attempt--;
    } catch (err) {
      const code = retryable(turn, attempt) ? errorCodeOf(err) : undefined;
      const next = code && RETRIES[code];
      if (!code || !next) throw err;
      await next(turn, code);
    }
  }
}

/**
 * Whether a failure of this attempt may be retried: the first attempt of a judged turn, before any
 * token was read, while the client is still there and nothing stopped the turn.
 */
function retryable(turn: Turn, attempt: number): boolean {
  const { phase, meter, req, stop } = turn;
  return (
    attempt === 0 && phase !== 'preparing' && meter.sampled.length === 0 && !req.signal.aborted && !stop.signal.aborted
  );
}

/**
 * One Generate call, read to its end. With the verdict still pending the call is made first and
 * the verdict awaited before its first chunk is read: a blocked prompt cancels it (and makes the
 * worker forget it); a redacted one cancels it and asks for a restart with the masked prompt (a
 * restart, not a retry: retries stay available).
 */
async function attemptOnce(turn: Turn, maxOutput: number): Promise<Ending | 'restart'> {
  const { deps, req } = turn;
  const plan = (turn.plan = planFor(turn, turn.resendWhole));
  const call = new AbortController();
  const onAbort = () => call.abort();
  // Stopped by its client (interrupt, steering), the conversation goes on from this call: the worker keeps its session.
  const onStop = () => call.abort(stopReasonOf(turn.stop) ? KEEP_ON_CANCEL : undefined);
  req.signal.addEventListener('abort', onAbort, { once: true });
  turn.stop.signal.addEventListener('abort', onStop, { once: true });
  if (turn.stop.signal.aborted) onStop(); // interrupted before this call: it ends at once
  let stream: AsyncIterator<inferenceV1.GenerateResponse> | undefined;
  try {
    const request = generateRequest(turn, plan, maxOutput);
    turn.timing?.callSent();
    hopTrace.mark('edge.generate.sent');
    stream = deps.backends.generate(turn.route.workerAddress, request, call.signal)[Symbol.asyncIterator]();
    const first = stream.next();
    // Read below, after the verdict; when it arrives is the engine's time as the edge sees it.
    first.then(
      (r) => {
        hopTrace.mark('edge.generate.first');
        if (!r.done) turn.timing?.arrived(r.value);
      },
      () => undefined,
    );
    turn.timer.mark('queue');
    if (turn.phase === 'preparing' && (await judgeOverlapped(turn, call, plan))) {
      call.abort();
      return 'restart';
    }
    hopTrace.mark('edge.verdict');
    turn.enter('streaming');
    return await readOutput(turn, stream, first);
  } finally {
    req.signal.removeEventListener('abort', onAbort);
    turn.stop.signal.removeEventListener('abort', onStop);
    endStream(call, stream);
  }
}

/** The verdict, awaited while `call` is in flight: resolves true when redaction changed the prompt. */
async function judgeOverlapped(turn: Turn, call: AbortController, plan: GeneratePlan): Promise<boolean> {
  return judge(turn).catch((err: unknown) => {
    call.abort();
    // The worker may have finished (and kept the prompt) before the verdict: a blocked prompt must
    // not stay reusable, so it drops what this call left.
    const { deps, req, route } = turn;
    deps.backends
      .forgetSession(route.workerAddress, { sessionKey: plan.sessionKey, cacheSalt: cacheSaltOf(req.principal.tenant) })
      .catch((e: unknown) =>
        req.logger.warn({ err: e, workerId: route.workerId }, 'could not make the worker forget a blocked prompt'),
      );
    throw err;
  });
}

/** The Generate request of a plan on the turn's route; its constraints come from the rendered header. */
function generateRequest(turn: Turn, plan: GeneratePlan, maxOutput: number): inferenceV1.GenerateRequest {
  const { req, route, rendering } = turn;
  return {
    sessionKey: plan.sessionKey,
    parentSessionKey: plan.parentSessionKey,
    cacheSalt: cacheSaltOf(req.principal.tenant),
    prefixLen: plan.prefixLength,
    tokens: plan.tokens,
    model: route.engineModel,
    sampling: { temperature: req.body.temperature ?? undefined, topP: req.body.top_p ?? undefined },
    maxOutputTokens: maxOutput,
    stopTokens: [...rendering.profile.stopTokens],
    constraints: generateConstraints(rendering.rendered.header),
    // A fresh session names its conversation root for the router; a continuation inherits it.
    prefixKey: plan.parentSessionKey === '' ? prefixKeyOf(req.body) : undefined,
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
function endStream(call: AbortController, stream: AsyncIterator<inferenceV1.GenerateResponse> | undefined): void {
  call.abort(CALL_DONE);
  stream?.return?.(undefined).catch(() => undefined);
}
