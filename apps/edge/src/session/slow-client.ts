import type { Logger } from '@fastloop/service-kit';

/** Options of {@link slowClientGuard}. */
export interface SlowClientOptions {
  /** Bytes queued towards the client beyond which it is cut (`EDGE_MAX_BUFFERED_BYTES`). */
  maxBufferedBytes: number;
  logger: Logger;
  /** Cuts the client at once; its turns are cancelled and its resources freed now, not on close. */
  cut: () => void;
}

/**
 * The slow-client cut, shared by every streaming transport (WebSocket, gRPC, SSE): a client that
 * stops reading must not make the edge buffer a whole response for it. Returns the check to make
 * before each write with the bytes still queued towards the client: true to write, false when the
 * client is (now, or already) cut.
 */
export function slowClientGuard(options: SlowClientOptions): (bufferedBytes: number) => boolean {
  let cut = false;
  return (bufferedBytes) => {
    if (cut) return false;
    if (bufferedBytes <= options.maxBufferedBytes) return true;
    cut = true;
    options.logger.warn({ bufferedBytes }, 'client reads too slowly; cutting it');
    options.cut();
    return false;
  };
}
