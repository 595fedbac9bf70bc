import { newId, type ResponseCreateRequest, type ResponseObject, type ResponseSteerEvent } from '@fastloop/protocol';
import type { Lane, LaneJob } from './lanes';

/** One accepted steering submission: owned by the server until a successor's `response.created` commits it. */
export interface Steer {
  id: string;
  previous_response_id: string;
  input: ResponseSteerEvent['input'];
}

/** A tool result or approval the client owes before a steered continuation (its identifying fields only). */
export interface RequiredInput {
  type: 'function_call_output' | 'custom_tool_call_output' | 'local_shell_call_output';
  call_id: string;
}

/** The steering events the server sends (OpenAI's `response.steer.*`), before their sequence number. */
export type SteerEvent =
  | { type: 'response.steer.accepted'; steer: { id: string; previous_response_id: string } }
  | {
      type: 'response.steer.pending';
      reason: 'waiting_for_required_input';
      required_input: RequiredInput[];
      steer: { id: string; previous_response_id: string };
    }
  | {
      type: 'response.steer.failed';
      steer: { id?: string; previous_response_id: string; input: unknown };
      error: { type: 'invalid_request_error'; code: string; message: string };
    };

export const steerEvents = {
  accepted: (s: Steer): SteerEvent => ({
    type: 'response.steer.accepted',
    steer: { id: s.id, previous_response_id: s.previous_response_id },
  }),
  pending: (s: Steer, required: RequiredInput[]): SteerEvent => ({
    type: 'response.steer.pending',
    reason: 'waiting_for_required_input',
    required_input: required,
    steer: { id: s.id, previous_response_id: s.previous_response_id },
  }),
  /** The uncommitted input handed back (with its id once one was allocated). */
  failed: (
    s: { id?: string; previous_response_id: string; input: unknown },
    code: string,
    message: string,
  ): SteerEvent => ({
    type: 'response.steer.failed',
    steer: s.id === undefined ? { previous_response_id: s.previous_response_id, input: s.input } : s,
    error: { type: 'invalid_request_error', code, message },
  }),
};

/**
 * Why steering input cannot be taken, or undefined: it must name a response running on this
 * connection (`lane`; `done` is the lane whose latest, finished, response it names), under the bound.
 */
export function steerRefusal(
  event: ResponseSteerEvent,
  at: { lane?: Lane; done?: Lane; max: number },
): SteerEvent | undefined {
  const { lane, done, max } = at;
  if (lane && lane.steers.length < max) return undefined;
  if (lane) {
    const why = `${max} steering inputs already wait for this response (EDGE_WS_MAX_PENDING_STEERS).`;
    return steerEvents.failed(event, 'too_many_pending_steers', why);
  }
  if (done)
    return steerEvents.failed(
      event,
      'response_already_completed',
      'The response completed and no longer takes steering input.',
    );
  return steerEvents.failed(event, 'response_not_found', 'No running response of that id on this connection.');
}

/** Queues steering input for the lane's running response; the turn ends at its next safe boundary. */
export function acceptSteer(lane: Lane, event: ResponseSteerEvent): Steer {
  const steer: Steer = { id: newId('steer'), previous_response_id: event.previous_response_id, input: event.input };
  lane.steers.push(steer);
  lane.current?.steer.abort();
  return steer;
}

/**
 * What becomes of the steering input queued for a response that just ended: a response that asks
 * for client-owned tool output keeps it waiting for the client's continuation (`pending`, with the
 * stubs to fill); one that completed or stopped for steering gets an automatic successor, first
 * on its lane, inheriting its settings and chaining from it (through the connection cache: O(new
 * items) on the edge); any other end hands the input back (`failed`).
 */
export function afterSteeredTurn(lane: Lane, body: ResponseCreateRequest, response?: ResponseObject): SteerEvent[] {
  const steers = lane.steers.splice(0);
  if (steers.length === 0) return [];
  const usable =
    response?.status === 'completed' ||
    (response?.status === 'incomplete' && response.incomplete_details?.reason === 'steered');
  if (!response || !usable) {
    const why = `Response '${steers[0].previous_response_id}' ended ${response?.status ?? 'without a result'} before the input could be committed.`;
    return steers.map((s) => steerEvents.failed(s, 'response_not_active', why));
  }
  const required = requiredInputOf(response);
  if (required.length > 0) {
    lane.waiting = { parentId: response.id, steers: [...(lane.waiting?.steers ?? []), ...steers] };
    return steers.map((s) => steerEvents.pending(s, required));
  }
  const input = steers.flatMap((s) => steerItems(s.input));
  lane.queue.unshift({
    body: { ...body, previous_response_id: response.id, input } as ResponseCreateRequest,
    generate: true,
    validateMs: 0,
    steers,
  });
  return [];
}

/**
 * A response that failed before its `response.created` (its commit point): the steering input it
 * was to commit goes back to the client.
 */
export function steersOfUncreated(lane: Lane, job: LaneJob): SteerEvent[] {
  const why = 'The successor response could not be created.';
  const failed = (job.steers ?? []).map((s) => steerEvents.failed(s, 'successor_creation_failed', why));
  return [...failed, ...afterSteeredTurn(lane, job.body)];
}

/**
 * A `response.create` continuing the response its lane's steering waits on takes that input first
 * (in submission order), keeping its own settings; its `response.created` commits it.
 */
export function withWaitingSteers(lane: Lane, job: LaneJob): LaneJob {
  const waiting = lane.waiting;
  if (!waiting || job.body.previous_response_id !== waiting.parentId) return job;
  lane.waiting = undefined;
  const own = typeof job.body.input === 'string' ? steerItems(job.body.input) : (job.body.input ?? []);
  const input = [...waiting.steers.flatMap((s) => steerItems(s.input)), ...own];
  return { ...job, body: { ...job.body, input } as ResponseCreateRequest, steers: waiting.steers };
}

/** The client tool calls a response ends with, as the stubs of the outputs it owes. */
function requiredInputOf(response: ResponseObject): RequiredInput[] {
  const stubs: RequiredInput[] = [];
  for (const item of response.output) {
    if (item.type === 'function_call') stubs.push({ type: 'function_call_output', call_id: item.call_id });
    else if (item.type === 'custom_tool_call') stubs.push({ type: 'custom_tool_call_output', call_id: item.call_id });
    else if (item.type === 'local_shell_call') stubs.push({ type: 'local_shell_call_output', call_id: item.call_id });
  }
  return stubs;
}

/** Steering input as `response.create` input items: user messages. */
function steerItems(input: ResponseSteerEvent['input']): Record<string, unknown>[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return input.map((m) => ({ type: 'message', role: 'user', content: m.content }));
}
