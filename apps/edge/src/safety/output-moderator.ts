import { safetyV1 } from '@fastloop/proto';
import { ITEM_OPS, type ItemOp } from './item-ops';
import type { OutputModeratorOptions, OutputSink, QueuedOp } from './output-sink';

export type { OutputModeratorOptions, OutputSink } from './output-sink';

/**
 * Output moderation while streaming. Parsed output goes through here on its way to the writer:
 * new text is sent to safety in batches (up to `inFlight` calls at once, answered in order, each
 * on the state the previous one left, starting from the input's), and released up to safety's frontier: every character
 * no match could still cover (`held_chars` says how many at the end could). Clean prose is shown
 * as soon as its verdict is back, all but a word that could still begin a credential or a policy
 * term; the rest goes once the output is finished. A block drops what is held, so the client never
 * receives the matched text, and stops generation.
 */
export class OutputModerator implements OutputSink {
  /** Writer calls held until the frontier (`releasable`) passes them. */
  private readonly queue: QueuedOp[] = [];
  private releasable = 0;
  private kind: OutputSink['currentKind'] = null;
  /** Characters of output text received so far. */
  private received = 0;
  /** Text not sent to safety yet, in pieces: slicing it off the whole output grown with `+=` copied all of it per batch. */
  private unsent: string[] = [];
  /** Characters sent to safety (judged, or in flight). */
  private sent = 0;
  /** `held_chars` of the last answer (unset before one, or from a service without it). */
  private held: number | undefined;
  private state: Promise<Buffer> | undefined;
  /** Calls sent and not answered yet, and the last one sent (answers come in order). */
  private inFlight = 0;
  private lastCall: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private failure: unknown;
  /** The turn ended without finish() (its stream failed): nothing more is sent or released. */
  private abandoned = false;
  /** finish() was called: the next call is the final one. */
  private finishing = false;
  private finalSent = false;
  /** The final call (no more output comes) has been answered. */
  private judgedAll = false;
  /** The first blocking finding, once the output is blocked. */
  blocked: safetyV1.Finding | undefined;
  /** Findings to flag (reported in the response's metadata). */
  readonly flagged: safetyV1.Finding[] = [];
  /** Safety's state after the whole output, once finish() released it: the conversation goes on from it. */
  finalState: Buffer | undefined;
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
    this.push({ pos: this.received, item: 'message' });
  }

  startReasoning(): void {
    this.kind = 'reasoning';
    this.push({ pos: this.received, item: 'reasoning' });
  }

  startFunctionCall(name: string, namespace?: string): void {
    this.kind = 'function_call';
    this.push({ pos: this.received, item: 'function_call', name, namespace });
  }

  startCustomToolCall(name: string, namespace?: string): void {
    this.kind = 'custom_tool_call';
    this.push({ pos: this.received, item: 'custom_tool_call', name, namespace });
  }

  delta(text: string): void {
    if (this.kind === null) this.kind = 'message'; // the writer opens a message for stray text
    const pos = this.received;
    this.received += text.length;
    this.unsent.push(text);
    this.push({ pos, text });
    this.schedule();
  }

  endItem(): void {
    this.kind = null;
    this.push({ pos: this.received, item: 'end' });
  }

  /**
   * Judges and releases the rest of the output. Resolves true when everything was released,
   * false when the output was blocked (`blocked` says why).
   * @throws the Classify failure: moderation fails closed.
   */
  async finish(): Promise<boolean> {
    this.finishing = true;
    this.close();
    while (!this.blocked && this.failure === undefined && !this.judgedAll) {
      if (!this.finalSent && this.inFlight < (this.options.inFlight ?? 1)) this.send(true);
      await this.lastCall;
    }
    if (this.failure) throw this.failure;
    if (this.blocked) return false;
    this.releasable = Infinity;
    this.release();
    return true;
  }

  /** The turn failed: a verdict still in flight releases nothing into its ended response (that threw, unawaited). */
  abandon(): void {
    this.abandoned = true;
    this.queue.length = 0;
    this.close();
  }

  /** Stops waiting to batch (the turn ended); a call in flight is left to settle. */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private push(op: QueuedOp): void {
    if (this.blocked || this.abandoned) return;
    this.queue.push(op);
    this.release();
  }

  /**
   * Sends new text now, or once `flushMs` has gathered more (sooner when `flushChars` have come).
   * The first text goes at once: it is what the user waits for; later batches trade a few ms of
   * cadence for fewer calls.
   */
  private schedule(): void {
    if (
      this.finishing ||
      this.abandoned ||
      this.inFlight >= (this.options.inFlight ?? 1) ||
      this.blocked ||
      this.failure !== undefined
    )
      return;
    const waiting = this.received - this.sent;
    if (waiting === 0) return;
    if (this.sent === 0 || this.options.flushMs <= 0 || waiting >= this.options.flushChars) this.send(false);
    else this.timer ??= setTimeout(() => this.send(false), this.options.flushMs);
  }

  private send(final: boolean): void {
    this.close();
    const end = this.received;
    const text = this.unsent.length === 1 ? this.unsent[0] : this.unsent.join('');
    this.unsent = [];
    this.sent = end;
    this.finalSent = final;
    // `held` is the frontier after the last batch only when none is in flight.
    const heldBefore = this.inFlight === 0 ? this.held : undefined;
    this.inFlight++;
    // Calls are made in the order sent: every send before the first answer waits on the input
    // state, and a later one on an answer's (resolved, so its call is made before the next send's).
    this.state ??= this.options.inputState();
    this.lastCall = this.state
      .then((state) =>
        this.options.classify({
          state,
          items: [{ itemType: 'output_text', role: 'assistant', text, source: safetyV1.ItemSource.ITEM_SOURCE_MODEL }],
          tenant: this.options.tenant,
          model: this.options.model,
          // Where the last frontier stood: safety tries only the starts from there on.
          output: { final, ...(heldBefore !== undefined ? { heldBefore } : {}) },
        }),
      )
      .then(
        (res) => {
          this.inFlight--;
          if (!this.blocked && this.failure === undefined && !this.abandoned) this.onVerdict(res, end, final);
        },
        (err: unknown) => {
          this.inFlight--;
          if (this.failure !== undefined || this.blocked || this.abandoned) return;
          this.failure = err;
          this.options.onBlock();
        },
      );
  }

  private onVerdict(res: safetyV1.ClassifyResponse, end: number, final: boolean): void {
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
    this.state = Promise.resolve(res.state);
    this.judgedAll = final;
    if (final) this.finalState = res.state;
    // A service from before `held_chars` says only its longest window: hold that much back.
    this.held = res.heldChars;
    const held = res.heldChars ?? Math.max(0, res.windowChars - 1);
    if (!final) this.releasable = Math.max(this.releasable, end - held);
    this.release();
    this.schedule();
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
      if (!('text' in op)) {
        if (op.pos > this.releasable) break;
        if (text !== '') this.target.delta(text);
        text = '';
        (ITEM_OPS[op.item] as (sink: OutputSink, op: ItemOp) => void)(this.target, op);
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
