import { status as GrpcStatus } from '@grpc/grpc-js';
import { safetyV1 } from '@fastloop/proto';
import { DomainError, ErrorCode, type MuxServerCall } from '@fastloop/service-kit';
import type { HeldState } from './classifier';

type Classify = (
  request: safetyV1.ClassifyRequest,
  signal?: AbortSignal,
  held?: HeldState,
) => Promise<safetyV1.ClassifyResponse>;

const EMPTY = Buffer.alloc(0);

/**
 * One output moderation session (ModerateStream): the start is the first batch with the
 * conversation's state; each message the next batch, classified on the state this call keeps, in
 * order, by the same `classify` as a Classify call (tenant turns, limits, metrics). Answers carry no
 * state but the final one, which ends the call; between batches the session keeps the state
 * decoded ({@link HeldState}), so a batch pays for neither a decode nor an encode. A failed batch fails the call: the caller opens a
 * new session from the state it started with and the text so far (classification does not depend
 * on how the text is cut, so the answers are the same).
 */
export function serveModeration(
  call: MuxServerCall<safetyV1.ClassifyRequest, safetyV1.ClassifyResponse>,
  classify: Classify,
): void {
  const { tenant, model } = call.request;
  const cancelled = new AbortController();
  call.on('cancelled', () => cancelled.abort());
  let state = call.request.state;
  let held: number | undefined;
  let kept: HeldState['previous'];
  let done = false;
  let chain = Promise.resolve();
  const judge = (next: () => safetyV1.ClassifyRequest) => {
    chain = chain.then(async () => {
      if (done || call.cancelled) return;
      const request = next();
      const final = request.output?.final === true;
      try {
        const res = await classify(request, cancelled.signal, {
          previous: kept,
          keep: final ? undefined : (next) => (kept = next),
        });
        if (res.state.length > 0) state = res.state;
        held = res.heldChars;
        done = final || res.verdict === safetyV1.Verdict.VERDICT_BLOCK;
        call.write(done ? res : { ...res, state: EMPTY });
        if (done) call.end();
      } catch (err) {
        done = true;
        call.emit('error', err);
      }
    });
  };
  if (!call.request.output) {
    done = true;
    call.emit('error', notOutput());
    return;
  }
  judge(() => call.request);
  call.on('message', (batch: safetyV1.ModerateBatch) =>
    judge(() => ({
      state,
      items: [
        { itemType: 'output_text', role: 'assistant', text: batch.text, source: safetyV1.ItemSource.ITEM_SOURCE_MODEL },
      ],
      tenant,
      model,
      output: { final: batch.final, ...(held !== undefined ? { heldBefore: held } : {}) },
    })),
  );
}

function notOutput(): DomainError {
  return new DomainError(
    ErrorCode.invalidFrame,
    'a moderation session starts with a Classify request of streamed output (`output` set)',
    GrpcStatus.INVALID_ARGUMENT,
  );
}
