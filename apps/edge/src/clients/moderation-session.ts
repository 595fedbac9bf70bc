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
 * The moderator calls `classify` one batch at a time with the state of the previous answer; in a
 * session those answers carry no state and the requests' states are ignored, but the session's
 * start and every batch's text are kept. When the session fails (safety restarted, the stream
 * broke, a service from before ModerateStream), the rest goes by Classify calls, the first of them
 * with the start state and all the text so far: classification does not depend on how the text is
 * cut, so the answers are those the session would have given.
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
  const classify: Classify = (request) => {
    const batch = request.items.map((i) => i.text).join('');
    start ??= request;
    text += batch;
    if (fellBack) return plain(request);
    let answer: Promise<safetyV1.ClassifyResponse>;
    if (!session) {
      session = mux!.session(request, settings);
      answer = session.first;
    } else answer = session.send({ text: batch, final: request.output?.final === true });
    return answer.catch(() => {
      // Re-established as Classify calls: the start state and everything sent so far, in one.
      fellBack = true;
      session?.close();
      const first = start!;
      return plain({
        ...first,
        items: [{ ...first.items[0], text }],
        output: { final: request.output?.final === true },
      });
    });
  };
  return { classify, close: () => session?.close() };
}
