import type { Gauge, StreamingCall } from '@fastloop/service-kit';

/**
 * Counts a call's prompt tokens in `inference_queued_tokens` from its arrival until the worker's
 * first answer on it (a token chunk, its end, or its error) — while it waits for a generation slot
 * or for its prefill. Summed over the calls of a worker, that is its backlog in tokens: what an
 * autoscaler adds workers for (deploy/k8s: the inference HorizontalPodAutoscaler). Returns the call
 * to hand on (it releases the count on the first answer) and a `release` for calls that end
 * without one (cancelled).
 */
export function countQueuedTokens<Req extends { readonly tokens: readonly number[] }, Res>(
  call: StreamingCall<Req, Res>,
  gauge: Gauge<'engine'>,
  labels: { engine: string },
): { call: StreamingCall<Req, Res>; release: () => void } {
  const tokens = call.request.tokens.length;
  let counted = tokens > 0;
  if (counted) gauge.inc(labels, tokens);
  const release = () => {
    if (!counted) return;
    counted = false;
    gauge.dec(labels, tokens);
  };
  const counting: StreamingCall<Req, Res> = {
    get request() {
      return call.request;
    },
    get cancelled() {
      return call.cancelled;
    },
    write: (message) => (release(), call.write(message)),
    end: () => (release(), call.end()),
    emit: (event, err) => (release(), call.emit(event, err)),
    on: (event, listener) => call.on(event, listener),
    off: (event, listener) => call.off(event, listener),
  };
  return { call: counting, release };
}
