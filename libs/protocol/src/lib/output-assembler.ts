import type { EventStream, ItemPosition, PartPosition } from './event-stream';
import { newId } from './new-id';
import type {
  LocalShellAction,
  OutputCompaction,
  OutputCustomToolCall,
  OutputFunctionCall,
  OutputItem,
  OutputItemStatus,
  OutputMessage,
  OutputReasoning,
} from './response-object-schema';
import type { ResponseStreamEvent } from './stream-event-schema';

/** Receives events in the order they must be sent. */
export type OutputEventSink = (event: ResponseStreamEvent) => void;

/** How an item ends. */
export interface EndItemOptions {
  /** `incomplete` when the item was cut short (output token limit, content filter). Default `completed`. */
  status?: Exclude<OutputItemStatus, 'in_progress'>;
  /** Reasoning items only: opaque state to hand back (the client asked via `include`). */
  encryptedContent?: string;
}

/** The ids of a started function call. */
export interface StartedFunctionCall {
  /** `fc_…`: the output item's id. */
  itemId: string;
  /** `call_…`: what the client's `function_call_output` answers. */
  callId: string;
}

type OpenItem =
  | { kind: 'message'; at: PartPosition; text: string }
  | { kind: 'reasoning'; at: PartPosition; text: string }
  | { kind: 'function_call'; at: ItemPosition; callId: string; name: string; namespace?: string; args: string }
  | { kind: 'custom_tool_call'; at: ItemPosition; callId: string; name: string; namespace?: string; input: string };

/**
 * Turns a model's output, as a sequence of simple calls, into the complete Responses event
 * sequence, and keeps the finished items for the final Response. For a text message:
 *
 * `output_item.added` → `content_part.added` → `output_text.delta`×N → `output_text.done` →
 * `content_part.done` → `output_item.done`
 *
 * For a function call: `output_item.added` (arguments `""`) →
 * `function_call_arguments.delta`×N → `function_call_arguments.done` → `output_item.done`; a custom
 * tool call the same with `custom_tool_call_input.delta` / `.done` and plain-text `input`.
 * Reasoning mirrors the message sequence with `reasoning_text` events.
 *
 * One item is open at a time: `start*` ends the open item first (as `completed`). Empty
 * deltas emit nothing. Lifecycle events (`created`, `completed`, …) stay with the caller,
 * which owns the Response object.
 */
export class OutputAssembler {
  private readonly items: OutputItem[] = [];
  private open: OpenItem | null = null;

  constructor(
    private readonly stream: EventStream,
    private readonly emit: OutputEventSink,
  ) {}

  /** The finished items, in output order (the open item, if any, is not included). */
  get output(): readonly OutputItem[] {
    return this.items;
  }

  /** The kind of the item being streamed, or null between items. */
  get openItemType(): OpenItem['kind'] | null {
    return this.open?.kind ?? null;
  }

  /** Starts an assistant message; returns its `msg_…` id. */
  startMessage(): string {
    this.endItem();
    const at: PartPosition = { itemId: newId('msg'), outputIndex: this.items.length, contentIndex: 0 };
    this.open = { kind: 'message', at, text: '' };
    this.emit(this.stream.outputItemAdded(at.outputIndex, message(at.itemId, 'in_progress', null)));
    this.emit(this.stream.contentPartAdded(at, outputText('')));
    return at.itemId;
  }

  /** Streams text into the open message. */
  appendText(delta: string): void {
    const item = this.expectOpen('message', 'appendText');
    if (delta === '') return;
    item.text += delta;
    this.emit(this.stream.outputTextDelta(item.at, delta));
  }

  /** Starts a call to tool `name` (inside `namespace` when the tool was declared in one). */
  startFunctionCall(name: string, namespace?: string, callId: string = newId('call')): StartedFunctionCall {
    this.endItem();
    const at: ItemPosition = { itemId: newId('fc'), outputIndex: this.items.length };
    this.open = { kind: 'function_call', at, callId, name, namespace, args: '' };
    this.emit(this.stream.outputItemAdded(at.outputIndex, functionCall(this.open, 'in_progress')));
    return { itemId: at.itemId, callId };
  }

  /** Streams JSON argument text into the open function call. */
  appendArguments(delta: string): void {
    const item = this.expectOpen('function_call', 'appendArguments');
    if (delta === '') return;
    item.args += delta;
    this.emit(this.stream.functionCallArgumentsDelta(item.at, delta));
  }

  /** Starts a call to custom (freeform) tool `name`; its input is plain text, not JSON. */
  startCustomToolCall(name: string, namespace?: string, callId: string = newId('call')): StartedFunctionCall {
    this.endItem();
    const at: ItemPosition = { itemId: newId('ctc'), outputIndex: this.items.length };
    this.open = { kind: 'custom_tool_call', at, callId, name, namespace, input: '' };
    this.emit(this.stream.outputItemAdded(at.outputIndex, customToolCall(this.open, 'in_progress')));
    return { itemId: at.itemId, callId };
  }

  /** Streams input text into the open custom tool call. */
  appendInput(delta: string): void {
    const item = this.expectOpen('custom_tool_call', 'appendInput');
    if (delta === '') return;
    item.input += delta;
    this.emit(this.stream.customToolCallInputDelta(item.at, delta));
  }

  /**
   * Adds a complete `local_shell_call` (its action is known only once the model finished writing
   * it, and the item has no delta events): `output_item.added` then `output_item.done`.
   */
  addLocalShellCall(action: LocalShellAction, callId: string = newId('call')): StartedFunctionCall {
    this.endItem();
    const outputIndex = this.items.length;
    const item = { id: newId('lsh'), type: 'local_shell_call' as const, call_id: callId, action };
    this.emit(this.stream.outputItemAdded(outputIndex, { ...item, status: 'in_progress' }));
    const done: OutputItem = { ...item, status: 'completed' };
    this.items.push(done);
    this.emit(this.stream.outputItemDone(outputIndex, done));
    return { itemId: item.id, callId };
  }

  /**
   * Adds a finished item that is not sampled token by token (a compaction): its `added` and `done`
   * events at once, as OpenAI streams it.
   */
  addFinished(item: OutputCompaction): void {
    this.endItem();
    const outputIndex = this.items.length;
    this.emit(this.stream.outputItemAdded(outputIndex, item));
    this.items.push(item);
    this.emit(this.stream.outputItemDone(outputIndex, item));
  }

  /** Starts a visible-reasoning item; returns its `rs_…` id. */
  startReasoning(): string {
    this.endItem();
    const at: PartPosition = { itemId: newId('rs'), outputIndex: this.items.length, contentIndex: 0 };
    this.open = { kind: 'reasoning', at, text: '' };
    this.emit(
      this.stream.outputItemAdded(at.outputIndex, { id: at.itemId, type: 'reasoning', summary: [], content: [] }),
    );
    this.emit(this.stream.contentPartAdded(at, { type: 'reasoning_text', text: '' }));
    return at.itemId;
  }

  /** Streams reasoning text into the open reasoning item. */
  appendReasoning(delta: string): void {
    const item = this.expectOpen('reasoning', 'appendReasoning');
    if (delta === '') return;
    item.text += delta;
    this.emit(this.stream.reasoningTextDelta(item.at, delta));
  }

  /**
   * Ends the open item with its `done` events and returns it as it now stands in the output;
   * returns undefined when no item is open.
   */
  endItem(options: EndItemOptions = {}): OutputItem | undefined {
    const open = this.open;
    if (open === null) return undefined;
    this.open = null;
    const status = options.status ?? 'completed';
    let item: OutputItem;
    switch (open.kind) {
      case 'message':
        this.emit(this.stream.outputTextDone(open.at, open.text));
        this.emit(this.stream.contentPartDone(open.at, outputText(open.text)));
        item = message(open.at.itemId, status, open.text);
        break;
      case 'function_call':
        this.emit(this.stream.functionCallArgumentsDone(open.at, open.name, open.args));
        item = functionCall(open, status);
        break;
      case 'custom_tool_call':
        this.emit(this.stream.customToolCallInputDone(open.at, open.input));
        item = customToolCall(open, status);
        break;
      case 'reasoning':
        this.emit(this.stream.reasoningTextDone(open.at, open.text));
        this.emit(this.stream.contentPartDone(open.at, { type: 'reasoning_text', text: open.text }));
        item = reasoning(open.at.itemId, open.text, options.encryptedContent);
        break;
    }
    this.items.push(item);
    this.emit(this.stream.outputItemDone(open.at.outputIndex, item));
    return item;
  }

  /** Ends the open item, if any, and returns every finished item. */
  finish(options?: EndItemOptions): readonly OutputItem[] {
    this.endItem(options);
    return this.items;
  }

  private expectOpen<K extends OpenItem['kind']>(kind: K, method: string): Extract<OpenItem, { kind: K }> {
    const open = this.open;
    if (open?.kind !== kind) {
      throw new Error(`OutputAssembler.${method}: no ${kind} item is open (open: ${open?.kind ?? 'none'})`);
    }
    return open as Extract<OpenItem, { kind: K }>;
  }
}

function outputText(text: string) {
  return { type: 'output_text' as const, text, annotations: [], logprobs: [] };
}

/** A message item; `text` null means no content part yet (as in `output_item.added`). */
function message(id: string, status: OutputItemStatus, text: string | null): OutputMessage {
  return { id, type: 'message', role: 'assistant', status, content: text === null ? [] : [outputText(text)] };
}

function functionCall(
  open: Extract<OpenItem, { kind: 'function_call' }>,
  status: OutputItemStatus,
): OutputFunctionCall {
  const item: OutputFunctionCall = {
    id: open.at.itemId,
    type: 'function_call',
    status,
    call_id: open.callId,
    name: open.name,
    arguments: status === 'in_progress' ? '' : open.args,
  };
  if (open.namespace !== undefined) item.namespace = open.namespace;
  return item;
}

function customToolCall(
  open: Extract<OpenItem, { kind: 'custom_tool_call' }>,
  status: OutputItemStatus,
): OutputCustomToolCall {
  const item: OutputCustomToolCall = {
    id: open.at.itemId,
    type: 'custom_tool_call',
    status,
    call_id: open.callId,
    name: open.name,
    input: status === 'in_progress' ? '' : open.input,
  };
  if (open.namespace !== undefined) item.namespace = open.namespace;
  return item;
}

function reasoning(id: string, text: string, encryptedContent: string | undefined): OutputReasoning {
  const item: OutputReasoning = { id, type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text }] };
  if (encryptedContent !== undefined) item.encrypted_content = encryptedContent;
  return item;
}
