import { safetyV1 } from '@fastloop/proto';
import type { MuxCallSettings, MuxClient, MuxSession } from '@fastloop/service-kit';

type Classify = (request: safetyV1.ClassifyRequest) => Promise<safetyV1.ClassifyResponse>;

/** The edge's ModerateStream client: sessions multiplexed on a few streams to safety. */
export type ModerationMux = MuxClient<safetyV1.ClassifyRequest, safetyV1.ClassifyResponse, safetyV1.ModerateBatch>;

/** One response's output moderation calls: the output moderator's `classify`, and the session's end. */
export interface ModerationCalls {
  classify: Classify;
  /** Ends the session if it is still open (the response ended without a final batch). */
  close(): void;
}

/**
 * Output moderation over a ModerateStream session (safety keeps the state between batches, so
 * only each batch's text travels), falling back to Classify calls carrying the state.
 *
 * The moderator may send a batch before the previous one is answered (pipelined, see
 * `EDGE_OUTPUT_MODERATION_IN_FLIGHT`): the session judges batches in order, on the state it keeps,
 * so the requests' states are ignored after its start. Classify calls need the previous answer's
 * state, so they go one after another here, each on the state and held characters of the answer
 * before it, whatever state the request carried. When the session fails (safety restarted, the
 * stream broke, a service from before ModerateStream), the batches not yet answered go by Classify
 * calls, the first of them with the start state and all the text up to its end: classification
 * does not depend on how the text is cut, so the answers are those the session would have given.
 */
export function moderationCalls(
  mux: ModerationMux | undefined,
  settings: MuxCallSettings,
  plain: Classify,
): ModerationCalls {
  let session: MuxSession<safetyV1.ClassifyResponse, safetyV1.ModerateBatch> | undefined;
  let start: safetyV1.ClassifyRequest | undefined;
  let text = '';
  // No mux (EDGE_GRPC_MUX off) or a service from before ModerateStream: Classify calls.
  let fellBack = mux === undefined || mux.unsupported;
  // The last Classify call, in order: the next one goes on its answer.
  let last: Promise<safetyV1.ClassifyResponse | undefined> = Promise.resolve(undefined);
  const byClassify = (request: safetyV1.ClassifyRequest, upTo: number, batch: string) => {
    const final = request.output?.final === true;
    const first = start!;
    const call = last.then((previous) => {
      if (previous === undefined)
        return plain({ ...first, items: [{ ...first.items[0], text: text.slice(0, upTo) }], output: { final } });
      // Blocked: nothing after it is judged (the moderator stops at the block).
      if (previous.verdict === safetyV1.Verdict.VERDICT_BLOCK) return previous;
      const held = previous.heldChars !== undefined ? { heldBefore: previous.heldChars } : {};
      return plain({
        ...first,
        state: previous.state,
        items: [{ ...first.items[0], text: batch }],
        output: { final, ...held },
      });
    });
    last = call;
    return call;
  };
  const classify: Classify = (request) => {
    const batch = request.items.map((i) => i.text).join('');
    start ??= request;
    text += batch;
    const upTo = text.length;
    if (fellBack) return byClassify(request, upTo, batch);
    let answer: Promise<safetyV1.ClassifyResponse>;
    if (!session) {
      session = mux!.session(request, settings);
      answer = session.first;
    } else answer = session.send({ text: batch, final: request.output?.final === true });
    return answer.catch(() => {
      // Re-established as Classify calls, from the first batch not answered on.
      fellBack = true;
      session?.close();
      return byClassify(request, upTo, batch);
    });
  };
  return { classify, close: () => session?.close() };
}
