import { createUsage, newId, type ResponseCreateRequest, type ResponseStreamEvent } from '@fastloop/protocol';
import { hopTrace } from '@fastloop/service-kit';
import { StageTimer } from '../edge-metrics';
import { finishTurn, type TurnEnd, type TurnOutcome } from './finish-stage';
import { generate } from './generate-stage';
import { readInput } from './input-stage';
import { COMPACTION_TRIGGER, compactIfDue, type InlineCompaction } from './compaction-stage';
import { judge } from './judge-stage';
import { renderTurn } from './render-stage';
import { routeTurn } from './route-stage';
import { Turn, type PreparedTurn } from './turn';
import type { TurnDeps, TurnRequest } from './turn-deps';
import { TurnTiming } from './turn-timing';
import { TurnWriter } from './turn-writer';
import { UsageMeter } from './usage-meter';
import { Verdict } from './verdict';

export type { TurnOutcome } from './finish-stage';

/**
 * The one implementation of a turn, shared by HTTP, SSE, WebSocket and gRPC bidi: a pipeline of
 * stages, each a file of its own, over one {@link Turn}. input → route → render prepare it; judge
 * sends `response.created` once safety allows it; generate streams the output; finish sends the
 * terminal event, then bills and stores. Errors the client must fix are thrown as ApiError before
 * any event is emitted; once `response.created` is out, every failure ends in exactly one
 * terminal event. Usage and storage happen after the terminal event.
 */
export async function runTurn(
  deps: TurnDeps,
  req: TurnRequest,
  emit: (event: ResponseStreamEvent) => void,
): Promise<TurnOutcome> {
  hopTrace.mark('edge.turn');
  const timer = new StageTimer(deps.metrics, req.transport, req.previous !== undefined);
  const turn = newTurn(await prepare(deps, req, timer), timer, emit);
  let end: TurnEnd;
  try {
    end = await play(turn);
  } catch (err) {
    if (turn.phase === 'preparing') throw err; // before response.created: the transport answers with an error
    end = { status: 'failed', cause: err };
  }
  return finishTurn(turn, end);
}

/**
 * The input, route and render stages, with the verdict asked for first and running beside them;
 * then the compaction stage, when the request asks for it and its rendering passed the threshold:
 * the stages run again over the compacted window (which is not compacted again).
 */
async function prepare(deps: TurnDeps, req: TurnRequest, timer: StageTimer): Promise<PreparedTurn> {
  timer.record('load', req.loadMs);
  let compaction: InlineCompaction | undefined;
  for (let turnReq = req; ; turnReq = compaction.req) {
    const input = await readInput(deps, turnReq);
    if (!compaction) timer.mark('validate', req.validateMs);
    // Classify goes first, as soon as the new items are narrowed: its round trip then runs beside
    // routing, rendering and (with safety overlap) the Generate call and the engine's first token,
    // instead of starting after them. Its request is O(new items); an unchanged header is reused.
    // A request that may compact asks after the compaction stage, which may change what is judged.
    const compacting = mayCompact(turnReq.body);
    // The verdict asks once the route names the canonical model whose policy applies (a
    // continuation's route is its conversation's: no round trip).
    const routing = routeTurn(deps, turnReq);
    const verdict = new Verdict(
      deps,
      turnReq,
      input,
      routing.then((r) => r.route),
      !compacting,
    );
    const { route, refresh } = await routing;
    timer.mark('route');
    const rendering = await renderTurn(deps, turnReq, input, route);
    timer.mark('render');
    const prepared: PreparedTurn = {
      deps,
      req: turnReq,
      input,
      route,
      routeRefresh: refresh,
      rendering,
      verdict,
      compaction,
    };
    if (!compacting) return prepared;
    // The summary is a nested turn of its own through this pipeline (scanned, billed, not stored).
    const nested = (sub: TurnRequest) => runTurn(deps, sub, () => undefined);
    compaction = await compactIfDue(nested, prepared);
    timer.mark('compact');
    if (compaction) continue;
    // Not compacted after all: a plain JSON request gets an overflow as its HTTP answer.
    if (rendering.overflow && turnReq.transport === 'http') throw rendering.overflow;
    return prepared;
  }
}

/** Whether a request may compact: `context_management`, or a `compaction_trigger` input item (O(new items)). */
function mayCompact(body: ResponseCreateRequest): boolean {
  if (body.context_management !== undefined) return true;
  return Array.isArray(body.input) && body.input.some((item) => item.type === COMPACTION_TRIGGER);
}

/** The turn with what it owns from here on: its writer and meter, and whether it is stored. */
function newTurn(prepared: PreparedTurn, timer: StageTimer, emit: (event: ResponseStreamEvent) => void): Turn {
  const { deps, req, route, rendering } = prepared;
  // Decided before response.created, so every event and the final object say whether it is stored.
  const storing = req.body.store !== false && deps.store !== undefined && deps.store.accepting?.() !== false;
  const body = storing || req.body.store === false ? req.body : { ...req.body, store: false };
  const seal = deps.reasoningSeal;
  const sealReasoning =
    seal && body.include?.includes('reasoning.encrypted_content')
      ? (text: string) => seal.seal(text, req.principal.tenant)
      : undefined;
  // A compacted turn continues its parent (lineage) over a window that does not extend its state.
  const previousResponseId = prepared.compaction ? prepared.compaction.previousResponseId : req.previous?.response.id;
  const identity = { id: newId('resp'), model: route.model, previousResponseId };
  const writer = new TurnWriter(body, identity, emit, sealReasoning);
  const timing = req.timing ? new TurnTiming(timer.startedAt - req.validateMs - req.loadMs) : undefined;
  if (timing) writer.beforeTerminal = (id) => req.timing?.(timing.event(id));
  const meter = new UsageMeter(rendering.rendered.tokens.length + rendering.profile.renderGenerationPrompt().length);
  return new Turn(prepared, timer, { writer, meter, storing, timing });
}

/**
 * The judge and generate stages; how the turn ends. Safety overlap lets a turn that generates
 * make its Generate call before the verdict: the generate stage then judges it.
 */
async function play(turn: Turn): Promise<TurnEnd> {
  const { deps, req, rendering } = turn;
  if (!deps.safetyOverlap || !req.generate || rendering.overflow) await judge(turn);
  if (rendering.overflow) {
    turn.meter.nothingPrefilled(); // nothing reached a worker: nothing was prefilled or sampled
    throw rendering.overflow;
  }
  // generate: false primes the connection cache only; nothing is sampled or prefilled.
  if (!req.generate) return { status: 'completed', usage: createUsage({ inputTokens: 0, outputTokens: 0 }) };
  return generate(turn);
}
