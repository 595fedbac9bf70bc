import {
  createResponseObject,
  EventStream,
  LocalShellActionSchema,
  OutputAssembler,
  toResponseError,
  type ApiError,
  type EndItemOptions,
  type LocalShellAction,
  type OutputCompaction,
  type ResponseCreateRequest,
  type ResponseObject,
  type ResponseStreamEvent,
  type TerminalEvent,
  type Usage,
} from '@fastloop/protocol';
import { LOCAL_SHELL_TOOL } from './narrow-item';

/** Why a response ended `incomplete`. */
export type IncompleteReason = 'max_output_tokens' | 'content_filter' | 'interrupted' | 'steered';

/** How a response ends: its terminal event. */
export type ResponseEnding =
  | { status: 'completed'; usage: Usage }
  | { status: 'incomplete'; usage: Usage; reason: IncompleteReason }
  | { status: 'failed'; error: ApiError };

/**
 * Owns one response's object and event sequence: lifecycle events here, output items through the
 * protocol's OutputAssembler. Every method emits in send order; exactly one terminal event.
 */
export class TurnWriter {
  readonly response: ResponseObject;
  private readonly stream = new EventStream();
  private readonly assembler: OutputAssembler;
  /** Whether the request offered `local_shell`: calls to it come out as `local_shell_call` items. */
  private readonly localShell: boolean;
  /** Arguments of a `local_shell` call being written; its item goes out whole when it ends. */
  private shellArgs: string | null = null;
  /** Text of the reasoning item being written, for its `encrypted_content`. */
  private reasoningText = '';

  /**
   * @param sealReasoning set when the client asked for `reasoning.encrypted_content`: seals a
   *   finished reasoning item's text for the client to send back.
   */
  constructor(
    body: ResponseCreateRequest,
    identity: { id: string; model: string; previousResponseId?: string },
    private readonly emit: (event: ResponseStreamEvent) => void,
    private readonly sealReasoning?: (text: string) => string,
  ) {
    this.response = createResponseObject(body, { ...identity, createdAt: Date.now() / 1000 });
    this.assembler = new OutputAssembler(this.stream, emit);
    this.localShell = (body.tools ?? []).some((tool) => tool.type === 'local_shell');
  }

  /** Sends the opt-in timing sideband; called just before the terminal event (see turn-timing.ts). */
  beforeTerminal?: (responseId: string) => void;

  get currentKind(): OutputAssembler['openItemType'] {
    return this.assembler.openItemType;
  }

  get terminated(): boolean {
    return this.stream.terminated;
  }

  created(): void {
    this.emit(this.stream.created(this.response));
    this.emit(this.stream.inProgress(this.response));
  }

  /** A finished compaction item (in-line compaction), streamed whole. */
  addCompaction(item: OutputCompaction): void {
    this.endItem();
    this.assembler.addFinished(item);
  }

  startMessage(): void {
    this.endItem();
    this.assembler.startMessage();
  }

  startReasoning(): void {
    this.endItem();
    this.reasoningText = '';
    this.assembler.startReasoning();
  }

  startFunctionCall(name: string, namespace?: string): void {
    this.endItem();
    if (this.localShell && namespace === undefined && name === LOCAL_SHELL_TOOL) {
      this.shellArgs = '';
      return;
    }
    this.assembler.startFunctionCall(name, namespace);
  }

  startCustomToolCall(name: string, namespace?: string): void {
    this.endItem();
    this.assembler.startCustomToolCall(name, namespace);
  }

  /** Streams text into whatever item is open (a parser delta belongs to the open item). */
  delta(text: string): void {
    if (this.shellArgs !== null) {
      this.shellArgs += text;
      return;
    }
    const kind = this.assembler.openItemType;
    if (kind === 'function_call') this.assembler.appendArguments(text);
    else if (kind === 'custom_tool_call') this.assembler.appendInput(text);
    else if (kind === 'reasoning') {
      this.reasoningText += text;
      this.assembler.appendReasoning(text);
    } else {
      if (kind === null) this.assembler.startMessage();
      this.assembler.appendText(text);
    }
  }

  endItem(options: EndItemOptions = {}): void {
    this.flushShellCall();
    if (this.sealReasoning && this.assembler.openItemType === 'reasoning') {
      this.assembler.endItem({ ...options, encryptedContent: this.sealReasoning(this.reasoningText) });
    } else this.assembler.endItem(options);
  }

  /**
   * Emits a finished `local_shell` call: a `local_shell_call` item when its arguments are an
   * action, else the `function_call` the model wrote (left open for the caller to end).
   */
  private flushShellCall(): void {
    const args = this.shellArgs;
    if (args === null) return;
    this.shellArgs = null;
    const action = localShellAction(args);
    if (action) {
      this.assembler.addLocalShellCall(action);
      return;
    }
    this.assembler.startFunctionCall(LOCAL_SHELL_TOOL);
    this.assembler.appendArguments(args);
  }

  /** Sends the terminal event `ending` names (a failure after another terminal event is dropped). */
  end(ending: ResponseEnding): void {
    switch (ending.status) {
      case 'completed':
        return this.completed(ending.usage);
      case 'incomplete':
        return this.incomplete(ending.usage, ending.reason);
      case 'failed':
        return this.failed(ending.error);
    }
  }

  completed(usage: Usage): void {
    this.settle('completed', usage);
    this.terminal(this.stream.completed(this.response));
  }

  /**
   * The response was cut short: by the output token limit, the content filter or its client. An
   * interrupted response (`discard_partial_items`) keeps only its finished items: the one being
   * written ends on the wire but is left out of the response and so of its chain.
   */
  incomplete(usage: Usage, reason: IncompleteReason): void {
    const finished = this.assembler.output.length;
    this.endItem({ status: 'incomplete' });
    this.settle('incomplete', usage);
    if (reason === 'interrupted') this.response.output = this.response.output.slice(0, finished);
    this.response.incomplete_details = { reason };
    this.terminal(this.stream.incomplete(this.response));
  }

  failed(err: ApiError): void {
    if (this.stream.terminated) return;
    this.endItem({ status: 'incomplete' });
    this.settle('failed', null);
    this.response.error = toResponseError(err);
    this.terminal(this.stream.failed(this.response));
  }

  /** Sends the terminal event, the timing sideband (when asked for) just before it. */
  private terminal(event: TerminalEvent): void {
    this.beforeTerminal?.(this.response.id);
    this.emit(event);
  }

  private settle(status: ResponseObject['status'], usage: Usage | null): void {
    this.endItem();
    this.response.status = status;
    this.response.output = [...this.assembler.output];
    this.response.usage = usage;
    this.response.completed_at = status === 'completed' ? Math.floor(Date.now() / 1000) : null;
  }
}

/** The arguments the model writes to the `local_shell` function: the action without its `type`. */
const ShellArgumentsSchema = LocalShellActionSchema.omit({ type: true }).extend({
  command: LocalShellActionSchema.shape.command.min(1),
  env: LocalShellActionSchema.shape.env.default({}),
});

/**
 * Reads a model's `local_shell` arguments as a `local_shell_call` action, or undefined when they
 * are not one (then the call goes out as the plain `function_call` the model wrote). The inverse of
 * how a `local_shell_call` renders (narrow-item.ts).
 */
export function localShellAction(args: string): LocalShellAction | undefined {
  let json: unknown;
  try {
    json = JSON.parse(args);
  } catch {
    return undefined;
  }
  const parsed = ShellArgumentsSchema.safeParse(json);
  return parsed.success ? { type: 'exec', ...parsed.data } : undefined;
}
