import type { Candidate } from '../placement/placement-types';
import { PendingLoad } from '../placement/pending-load';
import type { WorkerSpec } from '../workers';
import { WorkerLink, type WorkerLinkOptions } from './worker-link';

/** Options of a {@link Fleet}: how each worker is watched, plus change hooks for metrics. */
export interface FleetOptions extends Omit<WorkerLinkOptions, 'onServingChange' | 'onStats'> {
  onServingChange?: (worker: WorkerSpec, serving: boolean) => void;
  onStats?: (link: WorkerLink) => void;
  /** Called when a worker leaves the fleet (its metrics series should go). */
  onRemoved?: (worker: WorkerSpec) => void;
}

/**
 * The inference workers this router knows, from any number of sources (the static
 * INFERENCE_WORKERS list, DNS), each watched by a {@link WorkerLink}. A worker that appears in a
 * source starts being watched at once and takes calls once it says SERVING; one that disappears
 * from every source is dropped. Lifecycle: new → setWorkers()… → close() (idempotent).
 */
export class Fleet {
  readonly pending = new PendingLoad();
  private readonly links = new Map<string, WorkerLink>();
  private readonly sources = new Map<string, readonly WorkerSpec[]>();
  private serving: readonly WorkerLink[] = [];
  private closed = false;

  constructor(private readonly options: FleetOptions) {}

  /** Replaces what `source` lists and starts or stops watching workers accordingly. */
  setWorkers(source: string, workers: readonly WorkerSpec[]): void {
    if (this.closed) return;
    this.sources.set(source, workers);
    const wanted = new Map<string, WorkerSpec>();
    for (const list of this.sources.values()) for (const w of list) if (!wanted.has(w.id)) wanted.set(w.id, w);
    for (const [id, link] of this.links) {
      const want = wanted.get(id);
      if (want && want.address === link.spec.address) continue;
      link.close();
      this.links.delete(id);
      this.pending.forget(id);
      this.options.onRemoved?.(link.spec);
    }
    for (const [id, spec] of wanted) {
      if (this.links.has(id)) continue;
      const link = new WorkerLink(spec, {
        ...this.options,
        onServingChange: (l, serving) => {
          this.refresh();
          this.options.onServingChange?.(l.spec, serving);
        },
        onStats: this.options.onStats,
      });
      this.links.set(id, link);
      link.start();
    }
    this.refresh();
  }

  /** Every worker being watched, serving or not, ordered by id. */
  workers(): readonly WorkerLink[] {
    return [...this.links.values()].sort(byId);
  }

  /** Workers whose latest health said SERVING, ordered by id. Cached: O(1). */
  healthyWorkers(): readonly WorkerSpec[] {
    return this.serving.map((l) => l.spec);
  }

  /** Serving workers not in `exclude`, with their load as placement sees it now. */
  candidates(exclude: readonly string[] = []): Candidate[] {
    const out: Candidate[] = [];
    for (const link of this.serving) {
      if (exclude.includes(link.spec.id)) continue;
      const load = link.load;
      out.push({
        spec: link.spec,
        load: (load?.inFlight ?? 0) + this.pending.count(link.spec.id, load ? link.loadAt : 0),
        queuedTokens: load?.queuedPrefillTokens ?? 0,
        maxConcurrency: load && load.maxConcurrency > 0 ? load.maxConcurrency : Infinity,
        statsKnown: load !== undefined,
        kv: link.kv,
      });
    }
    return out;
  }

  /** Stops watching every worker. Safe to call twice. */
  close(): void {
    this.closed = true;
    for (const link of this.links.values()) link.close();
    this.links.clear();
    this.serving = [];
  }

  private refresh(): void {
    this.serving = [...this.links.values()].filter((l) => l.serving).sort(byId);
  }
}

function byId(a: WorkerLink, b: WorkerLink): number {
  return a.spec.id < b.spec.id ? -1 : a.spec.id > b.spec.id ? 1 : 0;
}
