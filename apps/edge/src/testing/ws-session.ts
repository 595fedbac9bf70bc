import { ResponsesSession } from '../session/responses-session';
import { ConnectionStateCache, StateCacheBudget } from '../session/state-cache';
import type { TurnDeps } from '../turn/turn-deps';

/** What the specs vary in {@link openWsSession}. */
export interface WsSessionOptions {
  /** The principal's tenant (its key id is `k`); default `t`. */
  tenant?: string;
  /** Fields every `create` sends, before its own (e.g. the `tools` of every turn). */
  defaults?: Record<string, unknown>;
  /** The session's bound on one message (`maxPayloadBytes`); default none. */
  maxPayloadBytes?: number;
  /** The client asked for `responsesapi.websocket_timing` before each terminal event. */
  timing?: boolean;
}

/**
 * A WebSocket-mode session on `deps` (fakeDeps' in the specs), with a connection cache of its own,
 * recording every event it sends in `events`. `create(body)` sends one `response.create` (model
 * `fake-model`, `store: false`, then `defaults`, then `body`) and resolves, once the session is
 * idle, with the events it answered.
 */
export function openWsSession(deps: TurnDeps, options: WsSessionOptions = {}) {
  const events: any[] = [];
  const session = new ResponsesSession({
    deps,
    principal: { tenant: options.tenant ?? 't', keyId: 'k' },
    transport: 'websocket',
    cache: new ConnectionStateCache(new StateCacheBudget(1 << 30), 1 << 28),
    send: (e) => events.push(e),
    logger: deps.logger,
    maxQueued: 4,
    maxPayloadBytes: options.maxPayloadBytes,
    timing: options.timing,
  });
  const create = async (body: Record<string, unknown>): Promise<any[]> => {
    const from = events.length;
    session.receive(
      JSON.stringify({ type: 'response.create', model: 'fake-model', store: false, ...options.defaults, ...body }),
    );
    await session.whenIdle();
    return events.slice(from);
  };
  return { session, events, create };
}
