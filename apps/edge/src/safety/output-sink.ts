import type { safetyV1 } from '@fastloop/proto';

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

/**
 * A writer call waiting for its text to be judged; `pos` is its place in the output text. Data,
 * not a closure per call: the bundles (and tsx) name every closure made with a defineProperty.
 */
export type QueuedOp =
  | { pos: number; text: string }
  | { pos: number; item: 'message' | 'reasoning' | 'end' }
  | { pos: number; item: 'function_call' | 'custom_tool_call'; name: string; namespace?: string };

/** Options of an {@link OutputModerator}. */
export interface OutputModeratorOptions {
  /** Safety's Classify (the edge's client, with its deadline). */
  classify: (request: safetyV1.ClassifyRequest) => Promise<safetyV1.ClassifyResponse>;
  tenant: string;
  model: string;
  /**
   * The conversation's state after this turn's input (the input verdict's): the output is judged as
   * its continuation, so the guard model's session and the model stream's tail carry over instead
   * of a fresh session per response (which, on a llamacpp guard, evicts the conversation's sequence).
   */
  inputState: () => Promise<Buffer>;
  /** How long new text waits to be sent with more (`EDGE_OUTPUT_MODERATION_FLUSH_MS`; 0: at once). */
  flushMs: number;
  /** New characters that are sent without waiting for `flushMs` (`EDGE_OUTPUT_MODERATION_FLUSH_CHARS`). */
  flushChars: number;
  /** Calls at once (`EDGE_OUTPUT_MODERATION_IN_FLIGHT`, 2 in the edge; 1 when unset); above 1, `classify` must order them (moderation-session.ts). */
  inFlight?: number;
  /** Called once when the output is blocked, to stop generation. */
  onBlock: () => void;
}
