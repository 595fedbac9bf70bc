import type { ServerResponse } from 'node:http';
import { formatSse, type ResponseStreamEvent } from '@fastloop/protocol';
import type { Logger } from '@fastloop/service-kit';
import { microtaskCork } from '../session/microtask-cork';
import { slowClientGuard } from '../session/slow-client';

/** Options of {@link sseStream}. */
export interface SseStreamOptions {
  /** Bytes of SSE queued towards a slow client before the stream is cut and the turn cancelled. */
  maxBufferedBytes: number;
  logger: Logger;
  /** Cancels the turn whose events these are. */
  cancel: () => void;
}

/**
 * A turn's events as Server-Sent Events on `res`: the 200 and its headers with the first event,
 * frames corked per piece of work, and the slow-client cut the persistent transports have.
 */
export function sseStream(
  res: ServerResponse,
  options: SseStreamOptions,
): { emit: (event: ResponseStreamEvent) => void; started: () => boolean } {
  let started = false;
  const cork = microtaskCork(res);
  const fast = slowClientGuard({
    maxBufferedBytes: options.maxBufferedBytes,
    logger: options.logger,
    cut: () => {
      options.cancel();
      res.destroy();
    },
  });
  const emit = (event: ResponseStreamEvent) => {
    if (!started) {
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      started = true;
    }
    if (!fast(res.writableLength)) return;
    cork();
    res.write(formatSse(event));
  };
  return { emit, started: () => started };
}
