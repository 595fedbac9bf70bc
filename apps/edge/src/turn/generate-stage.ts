import { status as GrpcStatus } from '@grpc/grpc-js';
import { inferenceV1 } from '@fastloop/proto';
import { DomainError, ErrorCode, errorCodeOf, type InternalErrorCode } from '@fastloop/service-kit';
import { endStream, forgetSession, generateRequest, OutputReader, planFor } from './generate-call';
import { judge } from './judge-stage';
import { finishModeration, moderatorFor } from './output-moderation';
import { routeFresh } from './route-stage';
import type { Turn } from './turn';
import type { ResponseEnding } from './turn-writer';

/** How a turn that generated to its end ends (failures throw instead). */
export type Ending = Exclude<ResponseEnding, { status: 'failed' }>;

/** Makes the next attempt different: what a retryable failure of the first attempt calls for. */
type Retry = (turn: Turn) => Promise<void> | void;

/**
 * Failures retried once, before any token was read: the worker lost the prefix (resend the whole
 * prompt), or it is gone or full (route again, to another worker, with the whole prompt).
 */
const RETRIES: Partial<Record<InternalErrorCode, Retry>> = {
  [ErrorCode.prefixMiss]: (turn) => {
    turn.deps.metrics.prefixMisses.inc();
    turn.plan = planFor(turn, true);
  },
  [ErrorCode.unavailable]: reroute,
  [ErrorCode.workerOverloaded]: reroute,
};

async function reroute(turn: Turn): Promise<void> {
  turn.deps.routeCache?.forgetWorker(turn.route.workerId);
  turn.route = await routeFresh(turn.deps, turn.req);
  turn.plan = planFor(turn, true);
}

/**
 * The generate stage: calls Generate (with the retries above) and streams the parsed output to
 * the client. With `deps.safetyOverlap` the call starts before the safety verdict, so the
 * classifier's round trip hides under the engine's time to first token; a blocked prompt cancels
 * the call before any token is read. Without it, the verdict comes first and nothing reaches a
 * worker before it.
 */
export async function generate(turn: Turn): Promise<Ending> {
  const { deps, req, route } = turn;
  const moderator = moderatorFor(turn);
  const reader = new OutputReader(turn, moderator ?? turn.writer);
  if (!deps.safetyOverlap) await judge(turn);
  turn.plan = planFor(turn);
  const maxOutput = Math.min(req.body.max_output_tokens ?? route.maxOutputTokens, route.maxOutputTokens);
  for (let attempt = 0; ; attempt++) {
    try {
      if ((await attemptOnce(turn, reader, maxOutput)) === 'restart') attempt--;
      else break;
    } catch (err) {
      if (turn.stop.signal.aborted) break; // output moderation blocked (or failed): finishModeration says which
      const retry = turn.phase !== 'preparing' && turn.meter.sampled.length === 0 && attempt === 0;
      const next = retry ? RETRIES[errorCodeOf(err) ?? ErrorCode.internal] : undefined;
      if (!next) throw err;
      await next(turn);
    }
  }
  if (!turn.stop.signal.aborted) reader.finish();
  if (moderator && !(await finishModeration(turn, moderator)))
    return { status: 'incomplete', usage: turn.meter.usage(), reason: 'content_filter' };
  return ending(turn, reader.done);
}

/**
 * One Generate call, read to its end. With the verdict still pending (safety overlap) the call is
 * made first and the verdict awaited before its first chunk is read: a blocked prompt cancels it
 * (and makes the worker forget it); a redacted one cancels it and asks for a restart with the
 * masked prompt (a restart, not a retry: retries stay available).
 */
async function attemptOnce(turn: Turn, reader: OutputReader, maxOutput: number): Promise<'read' | 'restart'> {
  const { deps, req } = turn;
  const plan = turn.plan!;
  const call = new AbortController();
  const onAbort = () => call.abort();
  req.signal.addEventListener('abort', onAbort, { once: true });
  turn.stop.signal.addEventListener('abort', onAbort, { once: true });
  let stream: AsyncIterator<inferenceV1.GenerateResponse> | undefined;
  try {
    stream = deps.backends
      .generate(turn.route.workerAddress, generateRequest(turn, plan, maxOutput), call.signal)
      [Symbol.asyncIterator]();
    const first = stream.next();
    first.catch(() => undefined); // read below, after the verdict
    turn.timer.mark('queue');
    if (turn.phase === 'preparing' && (await judgeOverlapped(turn, call, plan))) {
      call.abort();
      turn.plan = planFor(turn);
      return 'restart';
    }
    turn.enter('streaming');
    await reader.read(stream, first);
    return 'read';
  } finally {
    req.signal.removeEventListener('abort', onAbort);
    turn.stop.signal.removeEventListener('abort', onAbort);
    endStream(call, stream);
  }
}

/** The verdict, awaited while `call` is in flight: resolves true when redaction changed the prompt. */
async function judgeOverlapped(turn: Turn, call: AbortController, plan: NonNullable<Turn['plan']>): Promise<boolean> {
  return judge(turn).catch((err: unknown) => {
    call.abort();
    // The worker may have finished (and kept the prompt) before the verdict: a blocked prompt must
    // not stay reusable, so it drops what this call left.
    forgetSession(turn, plan);
    throw err;
  });
}

/** The turn's end as the worker's final message says: complete, or cut by the output token limit. */
function ending(turn: Turn, done: inferenceV1.GenerateDone | undefined): Ending {
  if (!done)
    throw new DomainError(
      ErrorCode.inferenceIncomplete,
      'the inference stream ended without a result',
      GrpcStatus.UNAVAILABLE,
      true,
    );
  const usage = turn.meter.finalUsage(done);
  return done.finishReason === inferenceV1.FinishReason.FINISH_REASON_LENGTH
    ? { status: 'incomplete', usage, reason: 'max_output_tokens' }
    : { status: 'completed', usage };
}
