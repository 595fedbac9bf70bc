/** What parsed output is written to: the TurnWriter, or an OutputModerator in front of it. */
export interface OutputSink {
  readonly currentKind: 'message' | 'reasoning' | 'function_call' | 'custom_tool_call' | null;
  startMessage(): void;
  startReasoning(): void;
  startFunctionCall(name: string, namespace?: string): void;
  startCustomToolCall(name: string, namespace?: string): void;
  delta(text: string): void;
  endItem(): void;
}

/** A writer call waiting for its text to be judged; `pos` is its place in the output text. */
export type QueuedOp = { pos: number; text: string } | { pos: number; run: (sink: OutputSink) => void };

/** The output moderator's writer calls held until safety's frontier passes them, in order. */
export class ReleaseQueue {
  private readonly ops: QueuedOp[] = [];
  /** Output characters before this may be shown. */
  private releasable = 0;

  constructor(private readonly target: OutputSink) {}

  push(op: QueuedOp): void {
    this.ops.push(op);
    this.release();
  }

  /** Moves the frontier to `pos` (never back) and hands the writer what it frees. */
  releaseUpTo(pos: number): void {
    this.releasable = Math.max(this.releasable, pos);
    this.release();
  }

  /** Drops everything held (the output was blocked). */
  drop(): void {
    this.ops.length = 0;
  }

  /**
   * Hands the writer every op whose text is releasable (splitting a delta at the boundary). The
   * text of consecutive deltas goes out as one delta: a verdict releases what several chunks
   * queued, and one delta per item per release is one event and one frame instead of several.
   */
  private release(): void {
    let text = '';
    while (this.ops.length > 0) {
      const op = this.ops[0];
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
          this.ops[0] = { pos: op.pos + room, text: op.text.slice(room) };
          break;
        }
        text += op.text;
      }
      this.ops.shift();
    }
    if (text !== '') this.target.delta(text);
  }
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
