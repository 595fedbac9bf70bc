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
