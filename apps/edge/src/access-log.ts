import type { Logger } from '@fastloop/service-kit';
import type { ResponseObject, Usage } from '@fastloop/protocol';
import type { TurnStage } from './edge-metrics';

/**
 * What a turn adds to its access line: which response and model, how it ended, its tokens, and where
 * its time went (the edge's stages, as `fastloop_edge_turn_stage_seconds` measures them). Never
 * content: no input, instructions, output or tool text.
 */
export interface TurnAccess {
  readonly responseId: string;
  readonly model: string;
  /** The Response object's status: completed, incomplete, failed. */
  readonly responseStatus: string;
  /** The error code of a failed response. */
  readonly code?: string;
  readonly inputTokens: number;
  readonly cachedTokens: number;
  readonly outputTokens: number;
  readonly reasoningTokens: number;
  /** The turn's stages in ms (validate, load, safety, route, render, queue, ttft, stream). */
  readonly stagesMs: Partial<Record<TurnStage, number>>;
  /** Its start (the request's validation) to its terminal event, ms. */
  readonly turnMs: number;
}

/** A finished turn's access fields. */
export function turnAccess(
  response: ResponseObject,
  usage: Usage,
  stagesMs: Partial<Record<TurnStage, number>>,
  turnMs: number,
): TurnAccess {
  return {
    responseId: response.id,
    model: response.model,
    responseStatus: response.status ?? 'completed',
    ...(response.error?.code ? { code: response.error.code } : {}),
    inputTokens: usage.input_tokens,
    cachedTokens: usage.input_tokens_details.cached_tokens,
    outputTokens: usage.output_tokens,
    reasoningTokens: usage.output_tokens_details.reasoning_tokens,
    stagesMs: Object.fromEntries(Object.entries(stagesMs).map(([k, v]) => [k, round(v)])),
    turnMs: round(turnMs),
  };
}

/** One access line of a persistent connection's turn (`response.create` on WebSocket or gRPC). */
export interface TurnAccessLine {
  readonly transport: 'websocket' | 'grpc';
  readonly tenant: string;
  /** 200 when the turn produced a response (see `turn.responseStatus`); else the error frame's status. */
  readonly status: number;
  /** The error frame's code when the turn was refused before `response.created`. */
  readonly code?: string;
  readonly previousResponseId?: string;
  readonly turn?: TurnAccess;
  /** Receipt of the event to its end, ms (the turn's own time plus its wait behind earlier ones). */
  readonly ms: number;
}

/** Logs one WebSocket or gRPC turn, at info: `{"msg":"access","access":"websocket","event":"response.create",…}`. */
export function logTurnAccess(logger: Logger, line: TurnAccessLine): void {
  if (!logger.isLevelEnabled('info')) return; // nothing to build: bindings() parses the logger's JSON
  const { turn, ...rest } = line;
  // A connection's logger already carries its tenant and transport: once per line is enough.
  const bound = logger.bindings();
  const fields = Object.fromEntries(Object.entries(rest).filter(([k]) => !(k in bound)));
  logger.info({ access: line.transport, event: 'response.create', ...fields, ms: round(line.ms), ...turn }, 'access');
}

/** One access line of an HTTP request. */
export interface HttpAccessLine {
  readonly method: string;
  /** Without the query string (which may carry ids a user would not log). */
  readonly path: string;
  readonly status: number;
  /** When the key authenticated. */
  readonly tenant?: string;
  /** The error body's code, when the answer was an error. */
  readonly code?: string;
  /** True when the client went away before the response was complete. */
  readonly aborted: boolean;
  readonly ms: number;
  /** When the request ran a turn (`POST /v1/responses`). */
  readonly turn?: TurnAccess;
}

/** Logs one HTTP request, at info: `{"msg":"access","access":"http","method":"POST","path":"/v1/responses",…}`. */
export function logHttpAccess(logger: Logger, line: HttpAccessLine): void {
  const { turn, ...rest } = line;
  logger.info({ access: 'http', ...rest, ms: round(line.ms), ...turn }, 'access');
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
