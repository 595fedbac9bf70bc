import type { ApiError } from './api-error';
import type { OutputItem, ResponseObject } from './response-object-schema';
import type { StreamContentPart, StreamEventOf, TerminalEvent } from './stream-event-schema';

/** Where an output item sits in `response.output`. */
export interface ItemPosition {
  /** The item's `id` (`msg_…`, `fc_…`, `rs_…`). */
  readonly itemId: string;
  /** Index in `response.output`. */
  readonly outputIndex: number;
}

/** Where a content part sits: its item, and its index in the item's `content`. */
export interface PartPosition extends ItemPosition {
  readonly contentIndex: number;
}

/**
 * Builds the streaming events of one response, assigning `sequence_number` 0, 1, 2, … in
 * call order. One instance per response; it only builds events (sending is the transport's
 * job), so build them in the order they are sent.
 *
 * Enforces that a response ends exactly once: after `completed`, `failed` or `incomplete`
 * every builder throws.
 */
export class EventStream {
  private next = 0;
  private ended = false;

  /** The `sequence_number` the next event will get (= events built so far). */
  get nextSequenceNumber(): number {
    return this.next;
  }

  /** True once a terminal event has been built. */
  get terminated(): boolean {
    return this.ended;
  }

  private seq(): number {
    if (this.ended) throw new Error('EventStream: the response already ended; no event may follow its terminal event');
    return this.next++;
  }

  // Lifecycle events snapshot the response: callers keep changing their object (output,
  // status, usage) after the event is built, possibly before it is serialised. They replace its
  // fields rather than edit them in place, and what comes from the request (instructions, tools,
  // text, metadata: most of the object's weight, resent every turn) is never changed, so a copy
  // of the top level with its own output items is a snapshot, without a deep clone per event.

  /** `response.created`. */
  created(response: ResponseObject): StreamEventOf<'response.created'> {
    return { type: 'response.created', sequence_number: this.seq(), response: snapshot(response) };
  }

  /** `response.in_progress`. */
  inProgress(response: ResponseObject): StreamEventOf<'response.in_progress'> {
    return { type: 'response.in_progress', sequence_number: this.seq(), response: snapshot(response) };
  }

  /** Terminal `response.completed`. */
  completed(response: ResponseObject): StreamEventOf<'response.completed'> {
    return this.terminal('response.completed', response);
  }

  /** Terminal `response.failed`; `response.error` should be set. */
  failed(response: ResponseObject): StreamEventOf<'response.failed'> {
    return this.terminal('response.failed', response);
  }

  /** Terminal `response.incomplete`; `response.incomplete_details` should be set. */
  incomplete(response: ResponseObject): StreamEventOf<'response.incomplete'> {
    return this.terminal('response.incomplete', response);
  }

  private terminal<T extends TerminalEvent['type']>(type: T, response: ResponseObject): StreamEventOf<T> {
    const event = { type, sequence_number: this.seq(), response: snapshot(response) } as StreamEventOf<T>;
    this.ended = true;
    return event;
  }

  // Item and part events carry the object given: pass one that is not mutated afterwards
  // (OutputAssembler builds a fresh object for every event).

  /** `response.output_item.added`. */
  outputItemAdded(outputIndex: number, item: OutputItem): StreamEventOf<'response.output_item.added'> {
    return { type: 'response.output_item.added', sequence_number: this.seq(), output_index: outputIndex, item };
  }

  /** `response.output_item.done`. */
  outputItemDone(outputIndex: number, item: OutputItem): StreamEventOf<'response.output_item.done'> {
    return { type: 'response.output_item.done', sequence_number: this.seq(), output_index: outputIndex, item };
  }

  /** `response.content_part.added`. */
  contentPartAdded(at: PartPosition, part: StreamContentPart): StreamEventOf<'response.content_part.added'> {
    return { type: 'response.content_part.added', sequence_number: this.seq(), ...partFields(at), part };
  }

  /** `response.content_part.done`. */
  contentPartDone(at: PartPosition, part: StreamContentPart): StreamEventOf<'response.content_part.done'> {
    return { type: 'response.content_part.done', sequence_number: this.seq(), ...partFields(at), part };
  }

  /** `response.output_text.delta`. */
  outputTextDelta(at: PartPosition, delta: string): StreamEventOf<'response.output_text.delta'> {
    // Fields written out rather than spread: this runs once per sampled chunk.
    return {
      type: 'response.output_text.delta',
      sequence_number: this.seq(),
      item_id: at.itemId,
      output_index: at.outputIndex,
      content_index: at.contentIndex,
      delta,
      logprobs: [],
    };
  }

  /** `response.output_text.done`. */
  outputTextDone(at: PartPosition, text: string): StreamEventOf<'response.output_text.done'> {
    return { type: 'response.output_text.done', sequence_number: this.seq(), ...partFields(at), text, logprobs: [] };
  }

  /** `response.function_call_arguments.delta`. */
  functionCallArgumentsDelta(at: ItemPosition, delta: string): StreamEventOf<'response.function_call_arguments.delta'> {
    return {
      type: 'response.function_call_arguments.delta',
      sequence_number: this.seq(),
      item_id: at.itemId,
      output_index: at.outputIndex,
      delta,
    };
  }

  /** `response.function_call_arguments.done`. */
  functionCallArgumentsDone(
    at: ItemPosition,
    name: string,
    args: string,
  ): StreamEventOf<'response.function_call_arguments.done'> {
    return {
      type: 'response.function_call_arguments.done',
      sequence_number: this.seq(),
      item_id: at.itemId,
      output_index: at.outputIndex,
      name,
      arguments: args,
    };
  }

  /** `response.custom_tool_call_input.delta`. */
  customToolCallInputDelta(at: ItemPosition, delta: string): StreamEventOf<'response.custom_tool_call_input.delta'> {
    return {
      type: 'response.custom_tool_call_input.delta',
      sequence_number: this.seq(),
      item_id: at.itemId,
      output_index: at.outputIndex,
      delta,
    };
  }

  /** `response.custom_tool_call_input.done`. */
  customToolCallInputDone(at: ItemPosition, input: string): StreamEventOf<'response.custom_tool_call_input.done'> {
    return {
      type: 'response.custom_tool_call_input.done',
      sequence_number: this.seq(),
      item_id: at.itemId,
      output_index: at.outputIndex,
      input,
    };
  }

  /** `response.reasoning_text.delta`. */
  reasoningTextDelta(at: PartPosition, delta: string): StreamEventOf<'response.reasoning_text.delta'> {
    return {
      type: 'response.reasoning_text.delta',
      sequence_number: this.seq(),
      item_id: at.itemId,
      output_index: at.outputIndex,
      content_index: at.contentIndex,
      delta,
    };
  }

  /** `response.reasoning_text.done`. */
  reasoningTextDone(at: PartPosition, text: string): StreamEventOf<'response.reasoning_text.done'> {
    return { type: 'response.reasoning_text.done', sequence_number: this.seq(), ...partFields(at), text };
  }

  /**
   * `error` inside the response's sequence (see ErrorEventSchema for why the error appears
   * both flat and nested). Not terminal: follow it with `failed` to end the response.
   */
  error(err: ApiError): StreamEventOf<'error'> {
    const error = { message: err.message, type: err.type, param: err.param, code: err.code };
    return {
      type: 'error',
      sequence_number: this.seq(),
      status: err.status,
      code: err.code,
      message: err.message,
      param: err.param,
      error,
    };
  }
}

function partFields(at: PartPosition) {
  return { item_id: at.itemId, output_index: at.outputIndex, content_index: at.contentIndex };
}

/** The response as it is now (see the lifecycle events above). */
function snapshot(response: ResponseObject): ResponseObject {
  // `created` and `in_progress` have no output yet: structuredClone's fixed cost (~1 µs) for nothing.
  return { ...response, output: response.output.length === 0 ? [] : structuredClone(response.output) };
}
