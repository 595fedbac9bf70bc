/** A decision older than this is assumed to be in the worker's reports (or to have failed). */
const PENDING_MAX_MS = 500;
/** A report may have been sampled this long before it arrived, so decisions that recent may be missing from it. */
const REPORT_SKEW_MS = 20;

/**
 * This router's recent decisions per worker that the worker's load reports may not show yet: a
 * burst of requests within one report interval must not all see the same "least loaded" worker.
 * Only local decisions count, so replicas differ here for at most one report interval after a
 * decision; with the same reports and nothing pending, every replica decides the same.
 */
export class PendingLoad {
  private readonly decisions = new Map<string, number[]>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Records a decision for `workerId`. */
  add(workerId: string): void {
    const list = this.decisions.get(workerId) ?? [];
    list.push(this.now());
    this.decisions.set(workerId, list);
  }

  /** Decisions for `workerId` not covered by a report received at `reportAt` (0 = none yet). */
  count(workerId: string, reportAt: number): number {
    const list = this.decisions.get(workerId);
    if (!list) return 0;
    const now = this.now();
    let drop = 0;
    while (drop < list.length && list[drop] < now - PENDING_MAX_MS) drop++;
    if (drop > 0) list.splice(0, drop);
    if (list.length === 0) {
      this.decisions.delete(workerId);
      return 0;
    }
    const since = reportAt - REPORT_SKEW_MS;
    let n = 0;
    for (let i = list.length - 1; i >= 0 && list[i] > since; i--) n++;
    return n;
  }

  /** Forgets a worker (it left the fleet). */
  forget(workerId: string): void {
    this.decisions.delete(workerId);
  }
}
