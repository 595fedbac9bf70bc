import type { ConversationEntry, RenderHeader, RenderLimits } from '../model-profile';
import { UnsupportedEntryError } from '../profile-errors';
import { DEFAULT_TOOL_NAMESPACE, developerMessageText, systemMessageText } from './harmony-header-text';
import { HarmonyToken as T } from './harmony-tokens';

/**
 * Encodes one text segment; must never produce a special token id. With `maxTokens`, throws a
 * `TokenBudgetExceededError` once the segment is known to need more tokens than that; with
 * `deadline` (a `performance.now()` time), a `RenderDeadlineError` once it has passed.
 */
export type EncodeText = (text: string, maxTokens?: number, deadline?: number) => number[];

/**
 * Renders conversations in the harmony format. Every text segment is encoded on its own and the
 * special ids are spliced between segments, so no BPE merge ever spans a boundary: rendering is
 * append-stable (a conversation's tokens are the concatenation of its entries' tokens).
 */
export class HarmonyRenderer {
  private readonly assistantPrefix: readonly number[];
  /**
   * `out.length` at which the running call's token budget is spent. Set for the duration of one
   * synchronous `header` or `entry` call (the renderer is shared, but calls never interleave).
   */
  private tokenEnd = Number.POSITIVE_INFINITY;
  /** The running call's `limits.deadline`, set like {@link tokenEnd}. */
  private deadline = Number.POSITIVE_INFINITY;

  constructor(private readonly encode: EncodeText) {
    this.assistantPrefix = [T.start, ...encode('assistant')];
  }

  /** The system message, then the developer message when there are instructions or tools. */
  header(h: RenderHeader, out: number[] = [], limits: RenderLimits = {}): number[] {
    const system = systemMessageText(h);
    const developer = developerMessageText(h, limits, system.length);
    return this.bounded(out, limits, () => {
      this.message(out, 'system', system);
      if (developer !== undefined) this.message(out, 'developer', developer);
      return out;
    });
  }

  /** One entry as it appears in history. */
  entry(e: ConversationEntry, out: number[] = [], limits: RenderLimits = {}): number[] {
    return this.bounded(out, limits, () => this.unboundedEntry(e, out));
  }

  private bounded(out: number[], limits: RenderLimits, render: () => number[]): number[] {
    if (limits.maxTokens === undefined && limits.deadline === undefined) return render();
    this.tokenEnd = limits.maxTokens === undefined ? Number.POSITIVE_INFINITY : out.length + limits.maxTokens;
    this.deadline = limits.deadline ?? Number.POSITIVE_INFINITY;
    try {
      return render();
    } finally {
      this.tokenEnd = Number.POSITIVE_INFINITY;
      this.deadline = Number.POSITIVE_INFINITY;
    }
  }

  private unboundedEntry(e: ConversationEntry, out: number[]): number[] {
    switch (e.kind) {
      case 'message':
        if (e.role === 'assistant') return this.assistant(out, 'final', e.text, T.end);
        return this.message(out, e.role, e.text);
      case 'reasoning':
        return this.assistant(out, 'analysis', e.text, T.end);
      case 'function_call':
        push(out, this.assistantPrefix);
        return this.functionCallBody(out, e.namespace, e.name, e.arguments);
      case 'custom_tool_call':
        push(out, this.assistantPrefix);
        return this.customCallBody(out, e.namespace, e.name, e.input);
      case 'function_call_output':
        out.push(T.start);
        push(out, this.encode(toolAddress(e.namespace, e.name)));
        push(out, this.encode(' to=assistant'));
        out.push(T.channel);
        push(out, this.encode('commentary'));
        return this.content(out, e.output, T.end);
    }
  }

  /** `<|start|>assistant`: what ends a prompt so that the model answers. */
  generationPrompt(out: number[] = []): number[] {
    push(out, this.assistantPrefix);
    return out;
  }

  /**
   * What the model samples after the generation prompt to produce `e`: the entry without its
   * `<|start|>assistant`, and a final answer ends with `<|return|>` (the stop token), not `<|end|>`.
   */
  completion(e: ConversationEntry): number[] {
    if (e.kind === 'message' && e.role === 'assistant') return this.channelBody([], 'final', e.text, T.return);
    if (e.kind === 'reasoning') return this.channelBody([], 'analysis', e.text, T.end);
    if (e.kind === 'function_call') return this.functionCallBody([], e.namespace, e.name, e.arguments);
    if (e.kind === 'custom_tool_call') return this.customCallBody([], e.namespace, e.name, e.input);
    const what = e.kind === 'message' ? `a ${e.role} message` : e.kind;
    throw new UnsupportedEntryError(`The model does not sample ${what}`);
  }

  private message(out: number[], role: string, text: string): number[] {
    out.push(T.start);
    push(out, this.encode(role));
    return this.content(out, text, T.end);
  }

  private assistant(out: number[], channel: string, text: string, terminator: number): number[] {
    push(out, this.assistantPrefix);
    return this.channelBody(out, channel, text, terminator);
  }

  private channelBody(out: number[], channel: string, text: string, terminator: number): number[] {
    out.push(T.channel);
    push(out, this.encode(channel));
    return this.content(out, text, terminator);
  }

  private functionCallBody(out: number[], namespace: string | undefined, name: string, args: string): number[] {
    out.push(T.channel);
    push(out, this.encode(`commentary to=${toolAddress(namespace, name)} `));
    out.push(T.constrain);
    push(out, this.encode('json'));
    return this.content(out, args, T.call);
  }

  /** A freeform call: no `<|constrain|>json`, the input is plain text. */
  private customCallBody(out: number[], namespace: string | undefined, name: string, input: string): number[] {
    out.push(T.channel);
    push(out, this.encode(`commentary to=${toolAddress(namespace, name)}`));
    return this.content(out, input, T.call);
  }

  private content(out: number[], text: string, terminator: number): number[] {
    out.push(T.message);
    // The content is where untrusted text is long; the short role and channel texts are not bounded.
    push(
      out,
      this.tokenEnd === Number.POSITIVE_INFINITY && this.deadline === Number.POSITIVE_INFINITY
        ? this.encode(text)
        : this.encode(text, Math.max(0, this.tokenEnd - out.length), this.deadline),
    );
    out.push(terminator);
    return out;
  }
}

/** `functions.name` or `namespace.name`: the recipient of a call and the author of its output. */
export function toolAddress(namespace: string | undefined, name: string): string {
  return `${namespace ?? DEFAULT_TOOL_NAMESPACE}.${name}`;
}

/** Appends without spread: `out.push(...tokens)` overflows the call stack on long texts. */
function push(out: number[], tokens: readonly number[]): void {
  for (let i = 0; i < tokens.length; i++) out.push(tokens[i]);
}
