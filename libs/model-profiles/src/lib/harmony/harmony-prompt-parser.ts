import type { ParsedPrompt, ParsedPromptMessage, ParsedTool, PromptReader } from '../model-profile';
import { PromptParseError } from '../profile-errors';
import { decodeTokens, type TokenTable } from '../token-text-decoder';
import { parseHarmonyHeader } from './harmony-header';
import { HarmonyToken as T } from './harmony-tokens';
import { parseToolsSection } from './parse-tools-section';
import { TsSyntaxError } from './typescript-to-schema';

const CONTENT_END: ReadonlySet<number> = new Set([T.end, T.call, T.return]);
const HEADER_END: ReadonlySet<number> = new Set([T.message, T.start, ...CONTENT_END]);

/**
 * Takes a rendered harmony prompt apart again: every `<|start|>header<|message|>content<|end|>`
 * message, the tools declared in developer messages, and whether it ends with the generation
 * prompt. Throws {@link PromptParseError} on token sequences the renderer does not produce.
 */
export function parseHarmonyPrompt(tokens: ArrayLike<number>, table: TokenTable): ParsedPrompt {
  const read = readMessages(tokens, tokens[0] === T.startOfText ? 1 : 0, table);
  return { messages: read.messages, tools: read.tools, endsWithGenerationPrompt: read.endsWithGenerationPrompt };
}

/**
 * {@link parseHarmonyPrompt} for a prompt that only grows (a session's calls): each `read` parses
 * only the messages after those an earlier read completed, so reading turn N of a conversation
 * costs O(its new tokens), not O(history). Messages are independent of each other, so the result
 * equals a full parse (property-tested).
 */
export class HarmonyPromptReader implements PromptReader {
  private readonly messages: ParsedPromptMessage[] = [];
  private readonly tools: ParsedTool[] = [];
  /** Where the message after the last completed one starts; -1 before the first read. */
  private consumed = -1;

  constructor(private readonly table: TokenTable) {}

  read(tokens: ArrayLike<number>): ParsedPrompt {
    // A shorter prompt cannot extend what was read: start again (the caller broke its promise).
    if (this.consumed < 0 || tokens.length < this.consumed) this.reset(tokens);
    // Throws without changing the state, so a bad prompt leaves the reader as it was.
    const read = readMessages(tokens, this.consumed, this.table);
    for (const m of read.messages) this.messages.push(m);
    for (const t of read.tools) this.tools.push(t);
    this.consumed = read.next;
    return {
      messages: this.messages.slice(),
      tools: this.tools.slice(),
      endsWithGenerationPrompt: read.endsWithGenerationPrompt,
    };
  }

  private reset(tokens: ArrayLike<number>): void {
    this.messages.length = 0;
    this.tools.length = 0;
    this.consumed = tokens[0] === T.startOfText ? 1 : 0;
  }
}

/** Complete messages from `from` on, the tools they declare, where the next message starts, and how the prompt ends. */
interface ReadMessages {
  messages: ParsedPromptMessage[];
  tools: ParsedTool[];
  /** Index after the last complete message. */
  next: number;
  endsWithGenerationPrompt: boolean;
}

function readMessages(tokens: ArrayLike<number>, from: number, table: TokenTable): ReadMessages {
  const decode = (ids: readonly number[]) => decodeTokens(table, ids);
  const messages: ParsedPromptMessage[] = [];
  let endsWithGenerationPrompt = false;
  let i = from;
  while (i < tokens.length) {
    if (tokens[i] !== T.start) throw new PromptParseError(`Expected <|start|> at token ${i}`);
    const headerEnd = indexOfAny(tokens, HEADER_END, i + 1);
    const header = parseHarmonyHeader(slice(tokens, i + 1, headerEnd), decode);
    if (headerEnd === tokens.length) {
      endsWithGenerationPrompt = header.author === 'assistant' && header.channel === undefined;
      if (!endsWithGenerationPrompt) throw new PromptParseError(`Unfinished message header at token ${i}`);
      break;
    }
    if (tokens[headerEnd] !== T.message) throw new PromptParseError(`Expected <|message|> at token ${headerEnd}`);
    const contentEnd = indexOfAny(tokens, CONTENT_END, headerEnd + 1);
    const content = slice(tokens, headerEnd + 1, contentEnd);
    if (contentEnd === tokens.length) throw new PromptParseError(`Unterminated message at token ${i}`);
    if (content.includes(T.start)) throw new PromptParseError(`<|start|> inside the message at token ${i}`);
    const message: ParsedPromptMessage = { author: header.author, content: decode(content) };
    if (header.channel !== undefined) message.channel = header.channel;
    if (header.recipient !== undefined) message.recipient = header.recipient;
    if (header.contentType !== undefined) message.contentType = header.contentType;
    messages.push(message);
    i = contentEnd + 1;
  }
  const next = endsWithGenerationPrompt ? i : tokens.length;
  return { messages, tools: toolsOf(messages), next, endsWithGenerationPrompt };
}

function slice(tokens: ArrayLike<number>, start: number, end: number): number[] {
  const out = new Array<number>(end - start);
  for (let k = start; k < end; k++) out[k - start] = tokens[k];
  return out;
}

function toolsOf(messages: readonly ParsedPromptMessage[]): ParsedTool[] {
  const tools: ParsedTool[] = [];
  for (const message of messages) {
    if (message.author !== 'developer') continue;
    try {
      tools.push(...parseToolsSection(message.content));
    } catch (error) {
      if (!(error instanceof TsSyntaxError)) throw error;
      throw new PromptParseError(`Unreadable tool definitions: ${error.message}`, { cause: error });
    }
  }
  return tools;
}

function indexOfAny(tokens: ArrayLike<number>, set: ReadonlySet<number>, from: number): number {
  for (let i = from; i < tokens.length; i++) if (set.has(tokens[i])) return i;
  return tokens.length;
}
