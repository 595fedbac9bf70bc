import type { OutputParser, ParseEvent } from '../model-profile';
import type { TextTokenizer } from './text-tokenizer';

/** How a model family writes tool calls in its output. */
export interface ToolCallFormat {
  /** `hermes`: `<tool_call>{"name", "arguments"}</tool_call>` (Hermes, Qwen, our default template).
   *  `llama3-json`: the whole answer is `{"name", "parameters"}` (Llama 3.1+ JSON tool calling). */
  readonly family: 'hermes' | 'llama3-json';
  /** Text that ends the assistant's turn (`<|im_end|>`, `<|eot_id|>`). */
  readonly endMarkers: readonly string[];
}

export const HERMES_FORMAT: ToolCallFormat = { family: 'hermes', endMarkers: ['<|im_end|>', '<|eot_id|>'] };
export const LLAMA3_JSON_FORMAT: ToolCallFormat = { family: 'llama3-json', endMarkers: ['<|eot_id|>', '<|eom_id|>'] };

/**
 * The tool-call family a chat template trains its model on: Llama 3 templates (header ids) answer
 * with a bare JSON call; ChatML/Hermes/Qwen ones (and ours) with `<tool_call>` tags.
 */
export function toolCallFormatOf(template: string): ToolCallFormat {
  return template.includes('<|start_header_id|>') && !template.includes('<tool_call>')
    ? LLAMA3_JSON_FORMAT
    : HERMES_FORMAT;
}

const CALL_OPEN = '<tool_call>';
const CALL_CLOSE = '</tool_call>';
const REPLACEMENT = '\uFFFD';

/**
 * Parses sampled tokens of a chat-template model into message and function_call items. Text is
 * decoded with the model's own detokenizer (a little context carried for SentencePiece spaces);
 * a call's JSON is buffered until its closing tag, then emitted as name + one arguments delta.
 */
export class ToolCallOutputParser implements OutputParser {
  private readonly tokens: number[] = [];
  private decodedLength = 0;
  private buffer = '';
  private inCall = false;
  /** Inside a call whose name is known: its arguments are being streamed. */
  private streamingArgs = false;
  /** Where the streamed arguments' JSON value ends: nothing after it is arguments. */
  private args = new JsonValueScanner();
  /** The call's arguments are complete: what follows up to the closing tag is the wrapper. */
  private afterArgs = false;
  private messageOpen = false;
  private finished = false;

  constructor(
    private readonly tokenizer: TextTokenizer,
    private readonly format: ToolCallFormat,
  ) {}

  push(tokens: readonly number[]): ParseEvent[] {
    if (this.finished) return [];
    for (const t of tokens) this.tokens.push(t);
    // Decoding the whole completion keeps SentencePiece's leading spaces right; completions are short
    // next to prompts, and an incomplete UTF-8 tail (U+FFFD) waits for the next token.
    const text = this.tokenizer.decode(this.tokens);
    const stable = text.endsWith(REPLACEMENT) ? text.slice(0, text.lastIndexOf(REPLACEMENT)) : text;
    if (stable.length <= this.decodedLength) return [];
    this.buffer += stable.slice(this.decodedLength);
    this.decodedLength = stable.length;
    return this.drain(false);
  }

  /**
   * Ends the stream. A call cut before its arguments ended (the token limit, or the model's end of
   * sequence) stays open, its arguments as far as they were sampled: the caller knows why the
   * stream ended and closes it (incomplete when the limit cut it). A call cut before its name was
   * complete is still a call, named as far as it was sampled, never message text.
   */
  finish(): ParseEvent[] {
    if (this.finished) return [];
    const events = this.drain(true);
    if (this.inCall && !this.streamingArgs && !this.afterArgs) {
      const name = partialCallName(this.buffer);
      if (name !== undefined) events.push(...callEvents(name, undefined));
      else events.push(...this.text(CALL_OPEN + this.buffer));
    } else if (!this.inCall && this.buffer !== '') {
      events.push(...this.text(this.buffer));
    }
    this.buffer = '';
    this.inCall = false;
    this.streamingArgs = false;
    this.afterArgs = false;
    if (this.messageOpen) events.push({ type: 'item_end', stop: 'eos' });
    this.messageOpen = false;
    this.finished = true;
    return events;
  }

  private drain(final: boolean): ParseEvent[] {
    const events: ParseEvent[] = [];
    for (;;) {
      if (this.inCall) {
        if (!this.streamingArgs && !this.afterArgs) events.push(...this.callHead());
        if (this.streamingArgs) {
          events.push(...this.streamArguments());
          if (this.streamingArgs) return events;
        }
        const close = this.buffer.indexOf(CALL_CLOSE);
        if (close < 0) {
          // Past the arguments everything up to the closing tag is the wrapper: drop it, but keep
          // what may be the start of the tag.
          if (this.afterArgs)
            this.buffer = this.buffer.slice(this.buffer.length - partialMarkerLength(this.buffer, [CALL_CLOSE]));
          return events;
        }
        if (!this.afterArgs) events.push(...this.call(this.buffer.slice(0, close)));
        this.buffer = this.buffer.slice(close + CALL_CLOSE.length).replace(/^\s+/, '');
        this.inCall = false;
        this.afterArgs = false;
        continue;
      }
      const open = this.format.family === 'hermes' ? this.buffer.indexOf(CALL_OPEN) : -1;
      const end = firstIndex(this.buffer, this.format.endMarkers);
      if (open >= 0 && (end === undefined || open < end.index)) {
        events.push(...this.text(this.buffer.slice(0, open).replace(/\s+$/, '')), ...this.closeMessage('end'));
        this.buffer = this.buffer.slice(open + CALL_OPEN.length);
        this.inCall = true;
        continue;
      }
      if (end !== undefined) {
        events.push(...this.text(this.buffer.slice(0, end.index)), ...this.closeMessage('end'));
        this.buffer = this.buffer.slice(end.index + end.marker.length).replace(/^\s+/, '');
        continue;
      }
      if (this.format.family === 'llama3-json' && !this.messageOpen && /^\s*\{/.test(this.buffer) && !final)
        return events;
      if (this.format.family === 'llama3-json' && final && !this.messageOpen) {
        const call = llamaCall(this.buffer);
        if (call) {
          events.push(...call);
          this.buffer = '';
          return events;
        }
      }
      // Keep back what could be the start of a marker split across tokens, and the whitespace
      // before it: text before a call loses its trailing whitespace, however the tokens fall.
      const keep = final
        ? 0
        : this.buffer.length -
          trimmedEnd(
            this.buffer,
            this.buffer.length - partialMarkerLength(this.buffer, [CALL_OPEN, ...this.format.endMarkers]),
          );
      events.push(...this.text(this.buffer.slice(0, this.buffer.length - keep)));
      this.buffer = this.buffer.slice(this.buffer.length - keep);
      return events;
    }
  }

  private text(raw: string): ParseEvent[] {
    // SentencePiece puts a space before each separately tokenized segment; a message starts after it.
    const text = this.messageOpen ? raw : raw.trimStart();
    if (text === '') return [];
    const events: ParseEvent[] = [];
    if (!this.messageOpen) {
      events.push({ type: 'item_start', item: { kind: 'message' } });
      this.messageOpen = true;
    }
    events.push({ type: 'delta', text });
    return events;
  }

  private closeMessage(stop: 'end'): ParseEvent[] {
    if (!this.messageOpen) return [];
    this.messageOpen = false;
    return [{ type: 'item_end', stop }];
  }

  /**
   * Once `{"name": "...", "arguments":` has arrived the item starts, and the arguments stream as
   * deltas from then on. Calls written another way are buffered to their closing tag.
   */
  private callHead(): ParseEvent[] {
    const head = CALL_HEAD.exec(this.buffer);
    if (!head) return [];
    let name: string;
    try {
      name = JSON.parse(head[1]) as string;
    } catch {
      return [];
    }
    if (name === '') return [];
    this.buffer = this.buffer.slice(head[0].length);
    this.streamingArgs = true;
    this.args = new JsonValueScanner();
    return callEvents(name, undefined);
  }

  /**
   * Streams the arguments: every character of their JSON value as it arrives, and not one after
   * it (the call's closing brace and tag are the wrapper's, whatever the spacing). The value's
   * end ends the item.
   */
  private streamArguments(): ParseEvent[] {
    const taken = this.args.feed(this.buffer);
    const events: ParseEvent[] = taken > 0 ? [{ type: 'delta', text: this.buffer.slice(0, taken) }] : [];
    this.buffer = this.buffer.slice(taken);
    if (!this.args.done) return events;
    this.streamingArgs = false;
    this.afterArgs = true;
    events.push({ type: 'item_end', stop: 'call' });
    return events;
  }

  private call(body: string): ParseEvent[] {
    const parsed = parseCall(body, 'arguments');
    if (!parsed) return this.text(CALL_OPEN + body + CALL_CLOSE);
    return callEvents(parsed.name, parsed.args);
  }
}

// `{"name": "<json string>", "arguments": ` and the arguments' first character: from there they stream.
const CALL_HEAD = /^\s*\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"arguments"\s*:\s*(?=\S)/;

/** The start of a function_call item; with `args`, its one delta and its end too. */
function callEvents(qualified: string, args: string | undefined): ParseEvent[] {
  const dot = qualified.lastIndexOf('.');
  const item =
    dot > 0
      ? { kind: 'function_call' as const, name: qualified.slice(dot + 1), namespace: qualified.slice(0, dot) }
      : { kind: 'function_call' as const, name: qualified };
  if (args === undefined) return [{ type: 'item_start', item }];
  return [
    { type: 'item_start', item },
    { type: 'delta', text: args },
    { type: 'item_end', stop: 'call' },
  ];
}

/** `end` moved back over whitespace. */
function trimmedEnd(text: string, end: number): number {
  while (end > 0 && /\s/.test(text[end - 1])) end--;
  return end;
}

function llamaCall(text: string): ParseEvent[] | undefined {
  const parsed = parseCall(text, 'parameters') ?? parseCall(text, 'arguments');
  return parsed ? callEvents(parsed.name, parsed.args) : undefined;
}

/** `{"name": "...", "<key>": {...}}` → name and the arguments as JSON text; else undefined. */
function parseCall(body: string, key: string): { name: string; args: string } | undefined {
  try {
    const value = JSON.parse(body) as Record<string, unknown>;
    if (typeof value !== 'object' || value === null || typeof value.name !== 'string' || value.name === '')
      return undefined;
    const args = value[key] ?? {};
    return { name: value.name, args: typeof args === 'string' ? args : JSON.stringify(args) };
  } catch {
    return undefined;
  }
}

/**
 * Finds where a JSON value ends in text that arrives in pieces: brackets and braces counted
 * outside strings, escapes inside them skipped. A bare scalar ends at the first character that
 * cannot continue it.
 */
export class JsonValueScanner {
  private depth = 0;
  private started = false;
  private inString = false;
  private escaped = false;
  private scalar = false;
  /** The value is complete. */
  done = false;

  /** Consumes `text` until the value ends; returns how many of its characters belong to the value. */
  feed(text: string): number {
    for (let i = 0; i < text.length && !this.done; i++) {
      const c = text[i];
      if (!this.started) {
        this.started = true;
        if (c === '{' || c === '[') this.depth = 1;
        else if (c === '"') this.inString = true;
        else this.scalar = true;
      } else if (this.scalar) {
        if (!/[0-9A-Za-z.+-]/.test(c)) {
          this.done = true;
          return i;
        }
      } else if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === '\\') this.escaped = true;
        else if (c === '"') {
          this.inString = false;
          if (this.depth === 0) this.done = true;
        }
      } else if (c === '"') this.inString = true;
      else if (c === '{' || c === '[') this.depth++;
      else if ((c === '}' || c === ']') && --this.depth === 0) this.done = true;
      if (this.done) return i + 1;
    }
    return text.length;
  }
}

/**
 * The name of a call cut before its arguments: what `text` (after `<tool_call>`) holds of
 * `{"name": "…` ('' when the name has not started); undefined when the text is no call's start.
 */
function partialCallName(text: string): string | undefined {
  if (!/^\s*(\{[\s\S]*)?$/.test(text)) return undefined;
  const m = /^\s*\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)/.exec(text);
  if (!m) return /^\s*(\{\s*("n?a?m?e?"?\s*:?\s*)?)?$/.test(text) ? '' : undefined;
  try {
    return JSON.parse(`"${m[1].replace(/\\$/, '')}"`) as string;
  } catch {
    return m[1];
  }
}

function firstIndex(text: string, markers: readonly string[]): { index: number; marker: string } | undefined {
  let best: { index: number; marker: string } | undefined;
  for (const marker of markers) {
    const index = text.indexOf(marker);
    if (index >= 0 && (best === undefined || index < best.index)) best = { index, marker };
  }
  return best;
}

/** Length of the longest suffix of `text` that is a proper prefix of one of `markers`. */
export function partialMarkerLength(text: string, markers: readonly string[]): number {
  let longest = 0;
  for (const marker of markers) {
    for (let n = Math.min(marker.length - 1, text.length); n > longest; n--) {
      if (text.endsWith(marker.slice(0, n))) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}
