import type { ConversationEntry } from './model-profile';

/**
 * The free text of an entry, the part a tokenizer encodes at a cost that grows with its size (names
 * and call ids are short): what callers weigh before rendering, e.g. to render large text off the
 * event loop or to refuse a prompt that cannot fit from its size alone.
 */
export function entryText(entry: ConversationEntry): string {
  switch (entry.kind) {
    case 'message':
    case 'reasoning':
      return entry.text;
    case 'function_call':
      return entry.arguments;
    case 'custom_tool_call':
      return entry.input;
    case 'function_call_output':
      return entry.output;
  }
}
