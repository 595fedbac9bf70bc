import WebSocket from 'ws';
import { forceGc, sampleProcess } from './process-stats';

/** Target memory per idle WebSocket connection on the edge. */
export const IDLE_TARGET_BYTES = 30 * 1024;

/** Memory the edge holds per idle WebSocket connection. */
export interface IdleResult {
  connections: number;
  /** Connections that failed to open (each counted, none retried). */
  failed: number;
  rssBeforeBytes: number;
  rssAfterBytes: number;
  /** Live heap (heap used right after a forced full GC) before and with the connections open. */
  heapBeforeBytes: number;
  heapAfterBytes: number;
  /** (RSS after − before) / connections. */
  rssPerConnectionBytes: number;
  /** (live heap after − before) / connections. */
  heapPerConnectionBytes: number;
}

/**
 * Opens `count` WebSocket connections to the edge (authenticated, nothing sent), `batch` at a
 * time, waits for the edge to settle, and divides the growth of its resident memory (and of its
 * live heap, measured after a forced full GC) by the connections held. Closes them all before returning.
 */
export async function runIdle(
  target: { wsUrl: string; apiKey: string; edgePid: number; edgeAdminPort: number },
  count: number,
  batch = 250,
): Promise<IdleResult> {
  const settle = () => new Promise((r) => setTimeout(r, 3000));
  await settle();
  const heapBefore = (await forceGc(target.edgeAdminPort)).heap.used_heap_size;
  const before = sampleProcess(target.edgePid);
  const sockets: WebSocket[] = [];
  let failed = 0;
  const open = () =>
    new Promise<void>((resolve) => {
      const ws = new WebSocket(target.wsUrl, {
        headers: { authorization: `Bearer ${target.apiKey}` },
        perMessageDeflate: false,
      });
      ws.once('open', () => {
        sockets.push(ws);
        resolve();
      });
      ws.once('error', () => {
        failed++;
        resolve();
      });
    });
  for (let i = 0; i < count; i += batch) await Promise.all(Array.from({ length: Math.min(batch, count - i) }, open));
  await settle();
  const heapAfter = (await forceGc(target.edgeAdminPort)).heap.used_heap_size;
  const after = sampleProcess(target.edgePid);
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<void>((resolve) => {
          ws.once('close', () => resolve());
          ws.close(1000);
          setTimeout(resolve, 5000).unref();
        }),
    ),
  );
  const held = Math.max(1, sockets.length);
  return {
    connections: sockets.length,
    failed,
    rssBeforeBytes: before.rssBytes,
    rssAfterBytes: after.rssBytes,
    heapBeforeBytes: heapBefore,
    heapAfterBytes: heapAfter,
    rssPerConnectionBytes: (after.rssBytes - before.rssBytes) / held,
    heapPerConnectionBytes: (heapAfter - heapBefore) / held,
  };
}
