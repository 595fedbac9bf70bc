import type { ResponseLike } from './clients/open-client';
import type { Mode } from './options';
import type { Workload } from './workload';

/**
 * One rollout's client side: what the next request body is for its mode, and how a response
 * extends the conversation (a tool call is answered with the workload's tool output).
 *
 * - http-stateless: the full history as `input` every turn, `store: false`.
 * - http-previous:  `previous_response_id` and only the new items, `store: true` (the response store).
 * - ws, grpc:       `previous_response_id` and only the new items, `store: false` (connection cache).
 *
 * Instructions and tools go with every request, as agents send them (the Responses API does not
 * carry them over with `previous_response_id`).
 */
export class Conversation {
  private readonly history: Record<string, unknown>[];
  private pending: Record<string, unknown>[];
  private previousId: string | undefined;
  private finished = false;
  /** Tool calls answered so far. */
  toolCalls = 0;

  constructor(
    readonly mode: Mode,
    private readonly workload: Workload,
  ) {
    const first = { type: 'message', role: 'user', content: workload.userPrompt };
    this.history = [first];
    this.pending = [first];
  }

  /** True once the model answered with a message (or the rollout was cut). */
  get done(): boolean {
    return this.finished;
  }

  /** The body of the next `response.create` / POST (without `stream` or `type`). */
  nextBody(): Record<string, unknown> {
    const w = this.workload;
    const common = { model: w.model, instructions: w.instructions, tools: w.tools };
    if (this.mode === 'http-stateless') return { ...common, store: false, input: this.history };
    const chained = this.previousId === undefined ? {} : { previous_response_id: this.previousId };
    return { ...common, ...chained, store: this.mode === 'http-previous', input: this.pending };
  }

  /**
   * Takes the completed response of turn `turn` (1-based). A function call is answered with the
   * tool output for that turn; a message ends the rollout.
   */
  accept(response: ResponseLike, turn: number): void {
    const last = response.output[response.output.length - 1];
    this.previousId = response.id;
    if (!last || last.type !== 'function_call') {
      this.finished = true;
      return;
    }
    const answer = {
      type: 'function_call_output',
      call_id: last.call_id,
      output: this.workload.toolOutput(turn, String(last.name)),
    };
    this.toolCalls++;
    this.history.push(...response.output, answer);
    this.pending = [answer];
  }

  /** Stops the rollout (e.g. the turn budget is spent). */
  finish(): void {
    this.finished = true;
  }
}
