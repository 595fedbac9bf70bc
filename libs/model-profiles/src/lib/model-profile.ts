import type { JsonSchema } from './json-schema';

/**
 * One item of a conversation, in the shape the renderer needs (not the Responses API wire shape).
 * `function_call_output` is the output of any tool call (function, custom or shell): the format
 * renders them alike, as a message from the tool.
 */
export type ConversationEntry =
  | { kind: 'message'; role: 'system' | 'developer' | 'user' | 'assistant'; text: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'function_call'; name: string; namespace?: string; arguments: string; callId: string }
  | { kind: 'custom_tool_call'; name: string; namespace?: string; input: string; callId: string }
  | { kind: 'function_call_output'; name: string; namespace?: string; output: string; callId: string };

/** The input format of a custom (freeform) tool: any text, or text matching a grammar. */
export type FreeformFormat = { type: 'text' } | { type: 'grammar'; syntax: string; definition: string };

/** A tool the model may call: a function (JSON arguments) or, with `freeform`, a custom tool (plain text). */
export interface ToolSpec {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object; absent means the tool takes no arguments. */
  parameters?: JsonSchema;
  /** Groups the tool under `namespace {name}`; absent means the `functions` namespace. */
  namespace?: string;
  /** Rendered as a comment above the namespace; the first tool of a namespace that has one wins. */
  namespaceDescription?: string;
  /** Set for a custom tool: it is called with plain text in this format instead of JSON (`parameters` is ignored). */
  freeform?: FreeformFormat;
}

/** What comes before the conversation: instructions, tools and the reasoning effort. */
export interface RenderHeader {
  instructions?: string;
  tools: readonly ToolSpec[];
  /** Defaults to `medium`. */
  reasoningEffort?: 'low' | 'medium' | 'high';
  /**
   * `required` or one named tool: formats that carry it (chat-template profiles) let the engine
   * force a tool call with a grammar. Harmony ignores it.
   */
  toolChoice?: 'required' | { name: string };
  /**
   * `text.format` json_schema (or json_object, as the schema `{"type": "object"}`): the engine
   * samples the answer under this schema's grammar. `strict` is what the client sent; formats
   * render the name and the schema only.
   */
  responseFormat?: { name: string; schema: JsonSchema; strict?: boolean };
}

/**
 * Bounds of one rendering of untrusted input. A rendering that would cross one stops early with a
 * `RenderLimitError` (schema depth, rendered characters) or a `TokenBudgetExceededError` (tokens),
 * so its cost is bounded by the limits, not by the input. Every field is optional: no bound.
 */
export interface RenderLimits {
  /** Most tokens the call may return (the room left in the context window). */
  maxTokens?: number;
  /** Longest rendered text of one tool (description and signature), in UTF-16 code units. */
  maxToolChars?: number;
  /** Longest rendered text of the header's messages, in UTF-16 code units. */
  maxHeaderChars?: number;
  /** Deepest nesting of a tool's parameter schema. */
  maxSchemaDepth?: number;
  /**
   * A `performance.now()` time after which tokenizing stops with a `RenderDeadlineError`: the
   * request's CPU budget. Honoured by the o200k tokenizer (checked every few thousand units).
   */
  deadline?: number;
}

/**
 * One event of an {@link OutputParser}; every `item_start` is followed by exactly one `item_end`,
 * but for a tool call the stream ended inside (see {@link OutputParser.finish}).
 */
export type ParseEvent =
  | {
      type: 'item_start';
      item:
        | { kind: 'message' }
        | { kind: 'reasoning' }
        | { kind: 'function_call'; name: string; namespace?: string }
        | { kind: 'custom_tool_call'; name: string; namespace?: string };
    }
  | { type: 'delta'; text: string }
  | { type: 'item_end'; stop: 'end' | 'call' | 'return' | 'eos' };

/** Turns sampled tokens, streamed in chunks, into output item events. */
export interface OutputParser {
  /** Consumes the next tokens; cost is O(tokens.length). Never throws on malformed output. */
  push(tokens: readonly number[]): ParseEvent[];
  /**
   * Ends the stream: closes an item left open (with `stop: 'eos'`), except a tool call cut before
   * its arguments ended, which stays open for the caller to end (as `incomplete` when the token
   * limit cut it). Safe to call twice.
   */
  finish(): ParseEvent[];
}

/** One message recovered from a rendered prompt. */
export interface ParsedPromptMessage {
  /** `system`, `developer`, `user`, `assistant`, or `functions.x` / `ns.x` for tool outputs. */
  author: string;
  channel?: string;
  recipient?: string;
  /** The content type after `<|constrain|>` (e.g. `json`), when present. */
  contentType?: string;
  content: string;
}

/** A tool definition recovered from the developer message. */
export interface ParsedTool {
  /** `functions` for plain function tools. */
  namespace: string;
  name: string;
  description?: string;
  /** Recovered from the TypeScript-like rendering; `{ type: 'object', properties: {} }` when it takes no arguments. */
  parameters: JsonSchema;
  /** Present for a custom tool, which takes plain text (`parameters` is then `{ type: 'string' }`). */
  freeform?: FreeformFormat;
}

/** A rendered prompt taken apart again (used by the simulated engine, which plays the model). */
export interface ParsedPrompt {
  messages: ParsedPromptMessage[];
  tools: ParsedTool[];
  /** True when the prompt ends with the generation prompt (`<|start|>assistant`). */
  endsWithGenerationPrompt: boolean;
  /** The header's tool choice, where the format carries it. */
  toolChoice?: 'required' | { name: string };
  /** The header's response format, where the format carries it. */
  responseFormat?: { name: string; schema: JsonSchema };
}

/**
 * An incremental {@link ModelProfile.parsePrompt} for a prompt that only grows (a session's calls).
 * Each `tokens` passed must extend the ones passed before (a prompt read from an append-only log);
 * `read` then parses only what is new and returns exactly what `parsePrompt(tokens)` would.
 */
export interface PromptReader {
  read(tokens: ArrayLike<number>): ParsedPrompt;
}

/** A tokenizer, a chat format and the model limits that go with them. */
export interface ModelProfile {
  readonly id: string;
  /** Tokens of prompt plus output the model can attend to. */
  readonly contextWindow: number;
  /** Upper bound for sampled tokens per response. */
  readonly maxOutputTokens: number;
  /** Number of token ids (valid ids are `0 .. vocabSize - 1`, special ids included). */
  readonly vocabSize: number;
  /**
   * The most UTF-16 code units one token can stand for (its vocabulary's longest entry, in bytes,
   * bounds it): `text.length / maxTokenChars` tokens at least, which lets a caller refuse a text
   * that cannot fit a context window without tokenizing it. Absent: unknown.
   */
  readonly maxTokenChars?: number;
  /** Token ids at which sampling must stop. */
  readonly stopTokens: readonly number[];
  /**
   * Encodes untrusted text: special-token text becomes ordinary tokens, never a special id. With
   * `maxTokens` it may stop with a `TokenBudgetExceededError`, with `deadline` (a
   * `performance.now()` time) with a `RenderDeadlineError`.
   */
  encodeText(text: string, maxTokens?: number, deadline?: number): number[];
  /** Decodes tokens, special ids included (as their `<|...|>` strings). */
  decode(tokens: readonly number[]): string;
  /** The system message and, when there are instructions or tools, the developer message. */
  renderHeader(h: RenderHeader, limits?: RenderLimits): number[];
  /** One entry as it appears in history. */
  renderEntry(e: ConversationEntry, limits?: RenderLimits): number[];
  /** What ends a prompt so that the model answers. */
  renderGenerationPrompt(): number[];
  /**
   * False when the format's template is not append-stable (rendering a longer conversation changes
   * earlier tokens): callers then render the whole conversation instead of appending entries.
   */
  readonly appendStable?: boolean;
  /** Header, entries and generation prompt; equal to the concatenation of the parts (append-stable). */
  render(h: RenderHeader, entries: readonly ConversationEntry[]): number[];
  /** The tokens a model samples after the generation prompt to produce this assistant-side entry. */
  renderCompletion(e: ConversationEntry): number[];
  /**
   * A parser for one response. A call to one of `tools` that is `freeform` comes out as a
   * `custom_tool_call`; any other recipient as a `function_call`.
   */
  createOutputParser(tools?: readonly ToolSpec[]): OutputParser;
  /** Recovers messages and tools from a rendered prompt. */
  parsePrompt(tokens: readonly number[]): ParsedPrompt;
  /** A fresh {@link PromptReader}; optional (a profile without one is parsed in full every call). */
  createPromptReader?(): PromptReader;
  /**
   * Builds what the tokenizer builds lazily (vocabulary tables, tens of ms), so that a service
   * calls it at startup and its first request does not pay for it.
   */
  warmUp(): void;
}
