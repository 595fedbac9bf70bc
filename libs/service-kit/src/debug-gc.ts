import { getHeapStatistics, type HeapInfo } from 'node:v8';

/** The admin path that forces a full garbage collection (see {@link forceGc}). */
export const DEBUG_GC_PATH = '/debug/gc';

/** What `POST /debug/gc` answers: the heap right after a forced full collection. */
export interface GcReport {
  /** How long the collection blocked the process, ms. */
  readonly gcMs: number;
  /** `v8.getHeapStatistics()` after the collection: `used_heap_size` is the live heap. */
  readonly heap: HeapInfo;
  /** `process.memoryUsage()` after the collection (rss, external and array buffers live outside the heap). */
  readonly memory: NodeJS.MemoryUsage;
}

/**
 * The process's `gc()`, which exists only when node was started with `--expose-gc` (e.g. through
 * FASTLOOP_SERVICE_NODE_ARGS): a full collection stops the world, so a production process must not
 * offer it to whoever reaches its admin port. Read at call time, not at start, so a test can provide it.
 */
export function exposedGc(): (() => void) | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? (gc as () => void) : undefined;
}

/**
 * Runs a full, synchronous garbage collection and reports the heap that survived it: the figure a
 * leak check compares (heap used without a forced GC also counts garbage not yet collected). Two
 * passes: V8 updates its count of external memory (Buffers) only at the collection after the one
 * that freed it (one pass left 40 MB of freed Buffers counted), and objects that weak callbacks or
 * finalizers let go of only die in the next pass.
 */
export function forceGc(gc: () => void): GcReport {
  const start = performance.now();
  gc();
  gc();
  const gcMs = performance.now() - start;
  return { gcMs, heap: getHeapStatistics(), memory: process.memoryUsage() };
}
