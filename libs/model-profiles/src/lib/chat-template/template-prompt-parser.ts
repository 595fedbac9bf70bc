import type { JsonSchema } from '../json-schema';
import type { ParsedPrompt, ParsedTool } from '../model-profile';
import { endsWithText, firstMarker, headerText, type Decode } from './prompt-text';

/**
 * Reads back what an engine needs from a rendered chat-template prompt's text: the tools (Hermes
 * `<tools>` JSON lines), the tool choice and response format (our default template's tags). Only
 * the system block before the first end marker is read, so text a user sends later cannot add tools
 * or constraints. Messages are not recovered: no engine plays the model from them. The whole-text
 * reference of {@link readTemplatePrompt}.
 */
export function parseTemplatePrompt(text: string, generationText: string, endMarkers: readonly string[]): ParsedPrompt {
  const at = firstMarker(text, endMarkers);
  return parseTemplateHeader(at >= 0 ? text.slice(0, at) : '', generationText !== '' && text.endsWith(generationText));
}

/**
 * {@link parseTemplatePrompt} of the prompt's tokens, decoding only its header and its end
 * (prompt-text.ts): what every request of a long conversation reads, at the cost of its header.
 */
export function readTemplatePrompt(
  decode: Decode,
  tokens: readonly number[],
  generationText: string,
  endMarkers: readonly string[],
): ParsedPrompt {
  return parseTemplateHeader(
    headerText(decode, tokens, endMarkers),
    generationText !== '' && endsWithText(decode, tokens, generationText),
  );
}

function parseTemplateHeader(header: string, endsWithGenerationPrompt: boolean): ParsedPrompt {
  const parsed: ParsedPrompt = { messages: [], tools: parseTools(header), endsWithGenerationPrompt };
  const choice = jsonBetween(header, '<tool_choice>', '</tool_choice>');
  if (choice === 'required') parsed.toolChoice = 'required';
  else if (isRecord(choice) && typeof choice.name === 'string') parsed.toolChoice = { name: choice.name };
  const format = jsonBetween(header, '<response_format>', '</response_format>');
  if (isRecord(format) && typeof format.name === 'string' && isRecord(format.schema))
    parsed.responseFormat = { name: format.name, schema: format.schema as JsonSchema };
  return parsed;
}

function parseTools(header: string): ParsedTool[] {
  const start = header.indexOf('<tools>');
  const end = header.indexOf('</tools>', start);
  if (start < 0 || end < 0) return [];
  const tools: ParsedTool[] = [];
  for (const line of header.slice(start + '<tools>'.length, end).split('\n')) {
    const tool = safeJson(line.trim());
    const fn = isRecord(tool) && isRecord(tool.function) ? tool.function : undefined;
    if (!fn || typeof fn.name !== 'string') continue;
    const dot = fn.name.lastIndexOf('.');
    tools.push({
      namespace: dot > 0 ? fn.name.slice(0, dot) : 'functions',
      name: dot > 0 ? fn.name.slice(dot + 1) : fn.name,
      description: typeof fn.description === 'string' ? fn.description : undefined,
      parameters: (isRecord(fn.parameters) ? fn.parameters : { type: 'object', properties: {} }) as JsonSchema,
    });
  }
  return tools;
}

function jsonBetween(text: string, open: string, close: string): unknown {
  const start = text.indexOf(open);
  const end = text.indexOf(close, start);
  return start < 0 || end < 0 ? undefined : safeJson(text.slice(start + open.length, end));
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
