import {
  fetchMetrics,
  forceGc,
  parseNodeMetrics,
  sampleProcess,
  type NodeMetrics,
  type ProcessSample,
} from './process-stats';

/** What the edge process did during one phase of the load benchmark. */
export interface EdgeUsage {
  /** CPU time the edge used, ms. */
  cpuMs: number;
  /** Event-loop delay over the phase (prom-client's histogram, reset at the phase start), ms. */
  eventLoopP50Ms: number;
  eventLoopP99Ms: number;
  /** The longest event-loop delay over the phase, ms. */
  eventLoopMaxMs: number;
  rssBeforeBytes: number;
  /** Highest RSS sampled (once a second) during the phase. */
  rssPeakBytes: number;
  /** Live heap at the phase start: heap used right after a forced full GC. */
  heapBeforeBytes: number;
  /** Live heap once the phase's connections are closed, the edge had {@link settleMs}, and a full GC ran. */
  heapAfterBytes: number;
  /** How long after the phase's connections closed the after-figures were taken. */
  settleMs: number;
  /** Memory outside the V8 heap (Buffers, array buffers) after the same collections. */
  externalBeforeBytes: number;
  externalAfterBytes: number;
  rssAfterBytes: number;
}

/** Watches the edge (pid + admin port) over one phase: call {@link start}, run the phase, then {@link finish}. */
export class EdgeWatch {
  private before: ProcessSample | undefined;
  private heapBefore = NaN;
  private externalBefore = NaN;
  private peak = 0;
  private timer: NodeJS.Timeout | undefined;
  private atEnd: ({ cpuMs: number } & NodeMetrics) | undefined;

  constructor(
    private readonly pid: number,
    private readonly adminPort: number,
  ) {}

  /**
   * Collects the edge's garbage and samples its live heap, resets its event-loop histogram (a
   * scrape does), and starts sampling RSS.
   */
  async start(): Promise<void> {
    const gc = await forceGc(this.adminPort);
    this.heapBefore = gc.heap.used_heap_size;
    this.externalBefore = gc.memory.external;
    await fetchMetrics(this.adminPort);
    this.before = sampleProcess(this.pid);
    this.peak = this.before.rssBytes;
    this.timer = setInterval(() => {
      this.peak = Math.max(this.peak, sampleProcess(this.pid).rssBytes);
    }, 1000);
  }

  /** Call when the load stops (before closing connections): CPU and event-loop delay of the phase. */
  async loadEnded(): Promise<void> {
    const cpuMs = sampleProcess(this.pid).cpuMs - this.before!.cpuMs;
    const metrics = parseNodeMetrics(await fetchMetrics(this.adminPort));
    this.atEnd = { cpuMs, ...metrics };
  }

  /**
   * Call after the phase's connections are closed: waits `settleMs` (for closes and writes still
   * in flight), forces a full GC, then samples memory. What survives is what the phase left behind.
   */
  async finish(settleMs: number): Promise<EdgeUsage> {
    clearInterval(this.timer);
    await new Promise((r) => setTimeout(r, settleMs));
    const peak = Math.max(this.peak, sampleProcess(this.pid).rssBytes);
    const gc = await forceGc(this.adminPort);
    const after = sampleProcess(this.pid);
    return {
      cpuMs: this.atEnd!.cpuMs,
      eventLoopP50Ms: this.atEnd!.eventLoopP50Ms,
      eventLoopP99Ms: this.atEnd!.eventLoopP99Ms,
      eventLoopMaxMs: this.atEnd!.eventLoopMaxMs,
      rssBeforeBytes: this.before!.rssBytes,
      rssPeakBytes: Math.max(peak, after.rssBytes),
      heapBeforeBytes: this.heapBefore,
      heapAfterBytes: gc.heap.used_heap_size,
      settleMs,
      externalBeforeBytes: this.externalBefore,
      externalAfterBytes: gc.memory.external,
      rssAfterBytes: after.rssBytes,
    };
  }
}
