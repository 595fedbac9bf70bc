import type { ParsedPrompt, ParsedPromptMessage, ParsedTool } from '../model-profile';
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
export function parseHarmonyPrompt(tokens: readonly number[], table: TokenTable): ParsedPrompt {
  const decode = (ids: readonly number[]) => decodeTokens(table, ids);
  const messages: ParsedPromptMessage[] = [];
  let endsWithGenerationPrompt = false;
  let i = tokens[0] === T.startOfText ? 1 : 0;
  while (i < tokens.length) {
    if (tokens[i] !== T.start) throw new PromptParseError(`Expected <|start|> at token ${i}`);
    const headerEnd = indexOfAny(tokens, HEADER_END, i + 1);
    const header = parseHarmonyHeader(tokens.slice(i + 1, headerEnd), decode);
    if (headerEnd === tokens.length) {
      endsWithGenerationPrompt = header.author === 'assistant' && header.channel === undefined;
      if (!endsWithGenerationPrompt) throw new PromptParseError(`Unfinished message header at token ${i}`);
      break;
    }
    if (tokens[headerEnd] !== T.message) throw new PromptParseError(`Expected <|message|> at token ${headerEnd}`);
    const contentEnd = indexOfAny(tokens, CONTENT_END, headerEnd + 1);
    const content = tokens.slice(headerEnd + 1, contentEnd);
    if (contentEnd === tokens.length) throw new PromptParseError(`Unterminated message at token ${i}`);
    if (content.includes(T.start)) throw new PromptParseError(`<|start|> inside the message at token ${i}`);
    const message: ParsedPromptMessage = { author: header.author, content: decode(content) };
    if (header.channel !== undefined) message.channel = header.channel;
    if (header.recipient !== undefined) message.recipient = header.recipient;
    if (header.contentType !== undefined) message.contentType = header.contentType;
    messages.push(message);
    i = contentEnd + 1;
  }
  return { messages, tools: toolsOf(messages), endsWithGenerationPrompt };
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

function indexOfAny(tokens: readonly number[], set: ReadonlySet<number>, from: number): number {
  for (let i = from; i < tokens.length; i++) if (set.has(tokens[i])) return i;
  return tokens.length;
}
