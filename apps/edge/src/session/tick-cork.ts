/** What {@link tickCork} needs of a stream: a net.Socket, an http.ServerResponse. */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * Returns a function that corks `stream` until the end of the current tick (`process.nextTick`).
 * Called before each write, it makes the events one batch of work emits together (a chunk's
 * deltas, an item's `done` events and the terminal event, `created` with the first item) leave in
 * one writev instead of one syscall each; writev was the edge's largest single cost in the relay
 * benchmark's profile (bench/load). Nothing waits for I/O or a timer: the batch is flushed before
 * the event loop moves on, so the first delta leaves as soon as the work that parsed it is done.
 */
export function tickCork(stream: Corkable): () => void {
  let corked = false;
  const uncork = () => {
    corked = false;
    stream.uncork();
  };
  return () => {
    if (corked) return;
    corked = true;
    stream.cork();
    process.nextTick(uncork);
  };
}
