import {
  createResponseObject,
  EventStream,
  OutputAssembler,
  toResponseError,
  type ApiError,
  type ResponseCreateRequest,
  type ResponseObject,
  type ResponseStreamEvent,
  type Usage,
} from '@fastloop/protocol';

/**
 * Owns one response's object and event sequence: lifecycle events here, output items through the
 * protocol's OutputAssembler. Every method emits in send order; exactly one terminal event.
 */
export class TurnWriter {
  readonly response: ResponseObject;
  private readonly stream = new EventStream();
  private readonly assembler: OutputAssembler;

  constructor(
    body: ResponseCreateRequest,
    identity: { id: string; model: string; previousResponseId?: string },
    private readonly emit: (event: ResponseStreamEvent) => void,
  ) {
    this.response = createResponseObject(body, { ...identity, createdAt: Date.now() / 1000 });
    this.assembler = new OutputAssembler(this.stream, emit);
  }

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

  startMessage(): void {
    this.assembler.startMessage();
  }

  startReasoning(): void {
    this.assembler.startReasoning();
  }

  startFunctionCall(name: string, namespace?: string): void {
    this.assembler.startFunctionCall(name, namespace);
  }

  startCustomToolCall(name: string, namespace?: string): void {
    this.assembler.startCustomToolCall(name, namespace);
  }

  /** Streams text into whatever item is open (a parser delta belongs to the open item). */
  delta(text: string): void {
    const kind = this.assembler.openItemType;
    if (kind === 'function_call') this.assembler.appendArguments(text);
    else if (kind === 'custom_tool_call') this.assembler.appendInput(text);
    else if (kind === 'reasoning') this.assembler.appendReasoning(text);
    else {
      if (kind === null) this.assembler.startMessage();
      this.assembler.appendText(text);
    }
  }

  endItem(): void {
    this.assembler.endItem();
  }

  completed(usage: Usage): void {
    this.settle('completed', usage);
    this.emit(this.stream.completed(this.response));
  }

  /** The output token limit cut the response short. */
  incomplete(usage: Usage, reason: 'max_output_tokens' | 'content_filter'): void {
    this.assembler.endItem({ status: 'incomplete' });
    this.settle('incomplete', usage);
    this.response.incomplete_details = { reason };
    this.emit(this.stream.incomplete(this.response));
  }

  failed(err: ApiError): void {
    if (this.stream.terminated) return;
    this.assembler.endItem({ status: 'incomplete' });
    this.settle('failed', null);
    this.response.error = toResponseError(err);
    this.emit(this.stream.failed(this.response));
  }

  private settle(status: ResponseObject['status'], usage: Usage | null): void {
    this.assembler.endItem();
    this.response.status = status;
    this.response.output = [...this.assembler.output];
    this.response.usage = usage;
    this.response.completed_at = status === 'completed' ? Math.floor(Date.now() / 1000) : null;
  }
}
