import type { StageTimer } from '../edge-metrics';
import type { InlineCompaction } from './compaction-stage';
import type { RouteDecision } from './conversation-state';
import type { GeneratePlan } from './generate-plan';
import type { TurnInput } from './input-stage';
import type { TurnRendering } from './render-stage';
import type { RouteRefresh } from './route-refresh';
import type { TurnDeps, TurnRequest } from './turn-deps';
import type { SafetyResult, Verdict } from './verdict';
import type { TurnTiming } from './turn-timing';
import type { TurnWriter } from './turn-writer';
import type { UsageMeter } from './usage-meter';

/**
 * Why a turn was stopped early by its client (the `incomplete_details.reason` it ends with):
 * `interrupted` (`response.interrupt`; the item being written is dropped) or `steered` (steering
 * input waits for a successor). Output moderation stops a turn without a reason.
 */
export type StopReason = 'interrupted' | 'steered';

/** The client's reason the turn was stopped for, if it was. */
export function stopReasonOf(stop: AbortController): StopReason | undefined {
  const reason: unknown = stop.signal.aborted ? stop.signal.reason : undefined;
  return reason === 'interrupted' || reason === 'steered' ? reason : undefined;
}

/**
 * Where a turn is. `preparing`: input read, routed and rendered, the verdict pending (with safety
 * overlap a Generate call may already be in flight; nothing has reached the client). `judged`:
 * the verdict allowed it and `response.created` is out. `streaming`: the worker's tokens are being
 * read. `terminal`: the terminal event is out. Phases only move forward.
 */
export type TurnPhase = 'preparing' | 'judged' | 'streaming' | 'terminal';

const ORDER: readonly TurnPhase[] = ['preparing', 'judged', 'streaming', 'terminal'];

/** What the input, route and render stages hand the turn. */
export interface PreparedTurn {
  readonly deps: TurnDeps;
  readonly req: TurnRequest;
  readonly input: TurnInput;
  readonly route: RouteDecision;
  /** The router asked beside this turn (its decision had expired): what the next turn starts from. */
  readonly routeRefresh?: RouteRefresh;
  readonly rendering: TurnRendering;
  /** The safety verdict, asked for on first use. */
  readonly verdict: Verdict;
  /** Set when the compaction stage compacted: `req` is then over the compacted window. */
  readonly compaction?: InlineCompaction;
}

/**
 * One turn's state, owned in one place: its writer (the response and its events), meter, timer,
 * route, plan and verdict. The stages (judge, generate, finish) each take the turn, do their job
 * and hand it on; none keeps state of its own.
 */
export class Turn {
  private current: TurnPhase = 'preparing';
  readonly writer: TurnWriter;
  readonly meter: UsageMeter;
  /** Decided before `response.created`, so every event and the final object say whether it is stored. */
  readonly storing: boolean;
  /** The timing split the client asked for (`responsesapi.websocket_timing`), else undefined. */
  readonly timing?: TurnTiming;
  readonly input: TurnInput;
  readonly verdict: Verdict;
  /** The compaction item this turn's output starts with, when it compacted in-line. */
  readonly compaction?: InlineCompaction['item'];
  /** The worker in use: the prepared route, or another one after the first died. */
  route: RouteDecision;
  /** The prepared route and the router's answer asked beside it, if it was. */
  readonly prepared: Pick<PreparedTurn, 'route' | 'routeRefresh'>;
  /** What the model reads: the prepared rendering, or the redacted one once judged. */
  rendering: TurnRendering;
  /** The verdict, once judged. */
  safety?: SafetyResult;
  /** The Generate call being made (or last made). */
  plan?: GeneratePlan;
  /** The next Generate call sends the whole prompt (the worker lost the prefix, or another worker takes it). */
  resendWhole = false;
  /**
   * Aborted to stop generating early: output moderation blocked the output (no reason), or the
   * client interrupted or steered the response (its {@link StopReason}).
   */
  readonly stop = new AbortController();

  readonly deps: TurnDeps;
  readonly req: TurnRequest;

  constructor(
    prepared: PreparedTurn,
    readonly timer: StageTimer,
    owned: { writer: TurnWriter; meter: UsageMeter; storing: boolean; timing?: TurnTiming },
  ) {
    ({ deps: this.deps, req: this.req, input: this.input, route: this.route } = prepared);
    this.prepared = { route: prepared.route, routeRefresh: prepared.routeRefresh };
    ({ rendering: this.rendering, verdict: this.verdict } = prepared);
    this.compaction = prepared.compaction?.item;
    ({ writer: this.writer, meter: this.meter, storing: this.storing, timing: this.timing } = owned);
    const { interrupt, steer } = this.req;
    onAbort(interrupt, () => this.stop.abort('interrupted' satisfies StopReason));
    // Steering waits for a safe boundary (no item open: see output-reader.ts); an interrupt stops now.
    // Before the first token nothing is open: that is a boundary, and waiting would cost a whole TTFT.
    onAbort(steer, () => {
      this.steerRequested = true;
      if (this.meter.sampled.length === 0) this.stop.abort('steered' satisfies StopReason);
    });
  }

  /** Steering input waits: the turn ends `incomplete`, `steered`, at its next item boundary. */
  steerRequested = false;

  get phase(): TurnPhase {
    return this.current;
  }

  /** Moves to `phase`; a phase never moves back. */
  enter(phase: TurnPhase): void {
    if (ORDER.indexOf(phase) < ORDER.indexOf(this.current))
      throw new Error(`a turn cannot go back from ${this.current} to ${phase}`);
    this.current = phase;
  }
}

/** Runs `fn` once `signal` aborts (now, if it has). */
function onAbort(signal: AbortSignal | undefined, fn: () => void): void {
  if (signal?.aborted) fn();
  else signal?.addEventListener('abort', fn, { once: true });
}
