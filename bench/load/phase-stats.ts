import { fetchMetrics, parseNodeMetrics, sampleProcess, type ProcessSample } from './process-stats';

/** What the edge process did during one phase of the load benchmark. */
export interface EdgeUsage {
  /** CPU time the edge used, ms. */
  cpuMs: number;
  /** Event-loop delay over the phase (prom-client's histogram, reset at the phase start), ms. */
  eventLoopP50Ms: number;
  eventLoopP99Ms: number;
  rssBeforeBytes: number;
  /** Highest RSS sampled (once a second) during the phase. */
  rssPeakBytes: number;
  heapBeforeBytes: number;
  /** Heap used once the phase's connections are closed and the edge had `settleMs` to collect. */
  heapAfterBytes: number;
  rssAfterBytes: number;
}

/** Watches the edge (pid + admin port) over one phase: call {@link start}, run the phase, then {@link finish}. */
export class EdgeWatch {
  private before: ProcessSample | undefined;
  private heapBefore = NaN;
  private peak = 0;
  private timer: NodeJS.Timeout | undefined;
  private atEnd: { cpuMs: number; eventLoopP50Ms: number; eventLoopP99Ms: number } | undefined;

  constructor(
    private readonly pid: number,
    private readonly adminPort: number,
  ) {}

  /** Samples the edge at rest, resets its event-loop histogram (a scrape does), and starts sampling RSS. */
  async start(): Promise<void> {
    const metrics = parseNodeMetrics(await fetchMetrics(this.adminPort));
    this.heapBefore = metrics.heapUsedBytes;
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
    this.atEnd = { cpuMs, eventLoopP50Ms: metrics.eventLoopP50Ms, eventLoopP99Ms: metrics.eventLoopP99Ms };
  }

  /** Call after the phase's connections are closed: waits `settleMs`, then samples memory. */
  async finish(settleMs: number): Promise<EdgeUsage> {
    clearInterval(this.timer);
    await new Promise((r) => setTimeout(r, settleMs));
    const after = sampleProcess(this.pid);
    const metrics = parseNodeMetrics(await fetchMetrics(this.adminPort));
    return {
      cpuMs: this.atEnd!.cpuMs,
      eventLoopP50Ms: this.atEnd!.eventLoopP50Ms,
      eventLoopP99Ms: this.atEnd!.eventLoopP99Ms,
      rssBeforeBytes: this.before!.rssBytes,
      rssPeakBytes: Math.max(this.peak, after.rssBytes),
      heapBeforeBytes: this.heapBefore,
      heapAfterBytes: metrics.heapUsedBytes,
      rssAfterBytes: after.rssBytes,
    };
  }
}
