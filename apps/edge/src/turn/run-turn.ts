import { createUsage, type ResponseStreamEvent } from '@fastloop/protocol';
import { StageTimer } from '../edge-metrics';
import { failTurn, finishTurn, type TurnOutcome } from './finish-stage';
import { generate, type Ending } from './generate-stage';
import { readInput } from './input-stage';
import { judge } from './judge-stage';
import { renderTurn } from './render-stage';
import { routeTurn } from './route-stage';
import { Turn, type PreparedTurn } from './turn';
import type { TurnDeps, TurnRequest } from './turn-deps';
import { verdictOf } from './verdict';

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
  const timer = new StageTimer(deps.metrics, req.transport, req.previous !== undefined);
  const turn = new Turn(deps, req, timer, await prepare(deps, req, timer), emit);
  let ending: Ending;
  try {
    ending = await play(turn);
  } catch (err) {
    if (turn.phase === 'preparing') throw err; // before response.created: the transport answers with an error
    return failTurn(turn, err);
  }
  return finishTurn(turn, ending);
}

/** The input, route and render stages, with the verdict started beside them when it gates Generate. */
async function prepare(deps: TurnDeps, req: TurnRequest, timer: StageTimer): Promise<PreparedTurn> {
  const input = await readInput(deps, req);
  timer.mark('validate', req.validateMs);
  timer.record('load', req.loadMs);
  const verdict = verdictOf(deps, req, input);
  // Without overlap the verdict gates Generate, so its round trip runs beside routing and rendering.
  // With overlap it is started after Generate (judge stage): its encoding stays off the critical path.
  if (!deps.safetyOverlap) void verdict();
  const route = await routeTurn(deps, req);
  timer.mark('route');
  const rendering = await renderTurn(deps, req, input, route);
  timer.mark('render');
  return { input, route, rendering, verdict };
}

/** The judge and generate stages; what the turn ends with. */
async function play(turn: Turn): Promise<Ending> {
  if (turn.rendering.overflow) {
    await judge(turn);
    turn.meter.nothingPrefilled();
    throw turn.rendering.overflow;
  }
  if (turn.req.generate) return generate(turn);
  // generate: false primes the connection cache only; nothing is sampled or prefilled.
  await judge(turn);
  return { status: 'completed', usage: createUsage({ inputTokens: 0, outputTokens: 0 }) };
}
