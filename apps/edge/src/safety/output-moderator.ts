import { safetyV1 } from '@fastloop/proto';

/** What parsed output is written to: the TurnWriter, or an {@link OutputModerator} in front of it. */
export interface OutputSink {
  readonly currentKind: 'message' | 'reasoning' | 'function_call' | 'custom_tool_call' | null;
  startMessage(): void;
  startReasoning(): void;
  startFunctionCall(name: string, namespace?: string): void;
  startCustomToolCall(name: string, namespace?: string): void;
  delta(text: string): void;
  endItem(): void;
}

/** Options of an {@link OutputModerator}. */
export interface OutputModeratorOptions {
  /** Safety's Classify (the edge's client, with its deadline). */
  classify: (request: safetyV1.ClassifyRequest) => Promise<safetyV1.ClassifyResponse>;
  tenant: string;
  model: string;
  /** New characters per Classify call (`EDGE_OUTPUT_MODERATION_CHUNK_CHARS`). */
  chunkChars: number;
  /** Called once when the output is blocked, to stop generation. */
  onBlock: () => void;
}

/** A writer call waiting for its text to be judged; `pos` is its place in the output text. */
type Op = { pos: number; text: string } | { pos: number; run: (sink: OutputSink) => void };

/**
 * Output moderation while streaming. Parsed output goes through here on its way to the writer:
 * text is classified in chunks as it arrives (one call in flight, carrying safety's state, whose
 * tail makes a match straddling two chunks visible), and released only once every match it could
 * be part of has been seen: everything but the last `windowChars - 1` judged characters, and the
 * rest when the output is finished. A block drops what is held, so the client never receives
 * the matched text, and stops generation.
 */
export class OutputModerator implements OutputSink {
  private readonly queue: Op[] = [];
  private kind: OutputSink['currentKind'] = null;
  /** Output text received so far. */
  private received = '';
  private judged = 0;
  private releasable = 0;
  private state: Buffer = Buffer.alloc(0);
  private inFlight: Promise<void> | undefined;
  private failure: unknown;
  /** Set by finish(): no more output comes, so the verdict on the last text releases everything. */
  private finishing = false;
  /** The first blocking finding, once the output is blocked. */
  blocked: safetyV1.Finding | undefined;
  /** Findings to flag (reported in the response's metadata). */
  readonly flagged: safetyV1.Finding[] = [];
  private readonly flaggedKeys = new Set<string>();

  constructor(
    private readonly target: OutputSink,
    private readonly options: OutputModeratorOptions,
  ) {}

  get currentKind(): OutputSink['currentKind'] {
    return this.kind;
  }

  startMessage(): void {
    this.kind = 'message';
    this.push({ pos: this.received.length, run: (s) => s.startMessage() });
  }

  startReasoning(): void {
    this.kind = 'reasoning';
    this.push({ pos: this.received.length, run: (s) => s.startReasoning() });
  }

  startFunctionCall(name: string, namespace?: string): void {
    this.kind = 'function_call';
    this.push({ pos: this.received.length, run: (s) => s.startFunctionCall(name, namespace) });
  }

  startCustomToolCall(name: string, namespace?: string): void {
    this.kind = 'custom_tool_call';
    this.push({ pos: this.received.length, run: (s) => s.startCustomToolCall(name, namespace) });
  }

  delta(text: string): void {
    if (this.kind === null) this.kind = 'message'; // the writer opens a message for stray text
    const pos = this.received.length;
    this.received += text;
    this.push({ pos, text });
    if (this.received.length - this.judged >= this.options.chunkChars) this.judgeNext();
  }

  endItem(): void {
    this.kind = null;
    this.push({ pos: this.received.length, run: (s) => s.endItem() });
  }

  /**
   * Judges and releases the rest of the output. Resolves true when everything was released,
   * false when the output was blocked (`blocked` says why).
   * @throws the Classify failure: moderation fails closed.
   */
  async finish(): Promise<boolean> {
    this.finishing = true;
    while (!this.blocked && this.failure === undefined && (this.inFlight || this.judged < this.received.length)) {
      if (!this.inFlight) this.judgeNext();
      await this.inFlight;
    }
    if (this.failure) throw this.failure;
    if (this.blocked) return false;
    this.releasable = Infinity;
    this.release();
    return true;
  }

  private push(op: Op): void {
    if (this.blocked) return;
    this.queue.push(op);
    this.release();
  }

  private judgeNext(): void {
    if (this.inFlight || this.blocked || this.failure !== undefined) return;
    const end = this.received.length;
    const text = this.received.slice(this.judged, end);
    const request = {
      state: this.state,
      items: [{ itemType: 'output_text', role: 'assistant', text, source: safetyV1.ItemSource.ITEM_SOURCE_MODEL }],
      tenant: this.options.tenant,
      model: this.options.model,
    };
    this.inFlight = this.options.classify(request).then(
      (res) => {
        this.inFlight = undefined;
        this.onVerdict(res, end);
      },
      (err: unknown) => {
        this.inFlight = undefined;
        this.failure = err;
        this.options.onBlock();
      },
    );
  }

  private onVerdict(res: safetyV1.ClassifyResponse, end: number): void {
    if (res.verdict === safetyV1.Verdict.VERDICT_BLOCK) {
      this.blocked = res.findings[0];
      this.queue.length = 0;
      this.options.onBlock();
      return;
    }
    for (const f of res.findings) {
      const key = `${f.ruleId}:${f.itemIndex}:${f.start}`;
      if (f.action !== safetyV1.Action.ACTION_BLOCK && !this.flaggedKeys.has(key)) {
        this.flaggedKeys.add(key);
        this.flagged.push(f);
      }
    }
    this.state = res.state;
    this.judged = end;
    // The last verdict frees the held-back window with the rest: one release, not two in a row.
    const allJudged = this.finishing && end === this.received.length;
    this.releasable = allJudged ? Infinity : Math.max(this.releasable, end - Math.max(0, res.windowChars - 1));
    this.release();
    if (this.received.length - this.judged >= this.options.chunkChars) this.judgeNext();
  }

  /**
   * Hands the writer every op whose text is releasable (splitting a delta at the boundary). The
   * text of consecutive deltas goes out as one delta: a verdict releases what several chunks
   * queued, and one delta per item per release is one event and one frame instead of several.
   */
  private release(): void {
    let text = '';
    while (this.queue.length > 0) {
      const op = this.queue[0];
      if ('run' in op) {
        if (op.pos > this.releasable) break;
        if (text !== '') this.target.delta(text);
        text = '';
        op.run(this.target);
      } else {
        let room = this.releasable - op.pos;
        // Never split a surrogate pair across two deltas.
        if (room > 0 && room < op.text.length && isLowSurrogate(op.text.charCodeAt(room))) room--;
        if (room <= 0) break;
        if (room < op.text.length) {
          text += op.text.slice(0, room);
          this.queue[0] = { pos: op.pos + room, text: op.text.slice(room) };
          break;
        }
        text += op.text;
      }
      this.queue.shift();
    }
    if (text !== '') this.target.delta(text);
  }
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
