import type { ConversationEntry } from '@fastloop/model-profiles';
import { newId, type ResponseStreamEvent } from '@fastloop/protocol';
import type { StageTimer } from '../edge-metrics';
import type { LogView } from './append-log';
import type { RouteDecision } from './conversation-state';
import type { GeneratePlan } from './generate-plan';
import type { TurnInput } from './input-stage';
import type { TurnRendering } from './render-stage';
import type { TurnDeps, TurnRequest } from './turn-deps';
import type { SafetyResult, Verdict } from './verdict';
import { TurnWriter } from './turn-writer';
import { UsageMeter } from './usage-meter';

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
  readonly input: TurnInput;
  readonly route: RouteDecision;
  readonly rendering: TurnRendering;
  /** The safety verdict, started on first use (see verdict.ts). */
  readonly verdict: Verdict;
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
  readonly input: TurnInput;
  readonly verdict: Verdict;
  /** The worker in use: the prepared route, or another one after the first died. */
  route: RouteDecision;
  /** What the model reads: the prepared rendering, or the redacted one once judged. */
  rendering: TurnRendering;
  /** The conversation's entries as rendered (redacted ones masked). */
  entries: LogView<ConversationEntry>;
  /** Some of this turn's entries were masked by a redaction. */
  redacted = false;
  /** The verdict, once judged. */
  safety?: SafetyResult;
  /** The Generate call being made (or last made). */
  plan?: GeneratePlan;
  /** Aborted to stop generating early (output moderation blocked the output). */
  readonly stop = new AbortController();

  constructor(
    readonly deps: TurnDeps,
    readonly req: TurnRequest,
    readonly timer: StageTimer,
    prepared: PreparedTurn,
    emit: (event: ResponseStreamEvent) => void,
  ) {
    ({ input: this.input, route: this.route, rendering: this.rendering, verdict: this.verdict } = prepared);
    this.entries = prepared.input.entries;
    this.storing = req.body.store !== false && deps.store !== undefined && deps.store.accepting?.() !== false;
    this.writer = newWriter(this, emit);
    const { rendered, profile } = this.rendering;
    this.meter = new UsageMeter(rendered.tokens.length + profile.renderGenerationPrompt().length);
  }

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

function newWriter(turn: Turn, emit: (event: ResponseStreamEvent) => void): TurnWriter {
  const { deps, req } = turn;
  const body = turn.storing || req.body.store === false ? req.body : { ...req.body, store: false };
  const seal = deps.reasoningSeal;
  const sealReasoning =
    seal && body.include?.includes('reasoning.encrypted_content')
      ? (text: string) => seal.seal(text, req.principal.tenant)
      : undefined;
  const identity = { id: newId('resp'), model: turn.route.model, previousResponseId: req.previous?.response.id };
  return new TurnWriter(body, identity, emit, sealReasoning);
}
