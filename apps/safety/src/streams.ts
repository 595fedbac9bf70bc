import { safetyV1 } from '@fastloop/proto';

/**
 * Who wrote a piece of text. Items are concatenated per stream (so a value split across two items
 * of the same author, or two turns, is one match) and each stream keeps its own tail in the state.
 * - `input`: the user and the developer (messages of those roles, instructions);
 * - `tool`: text no participant wrote — tool results, retrieved content, tool definitions — the
 *   only stream scored for prompt injection;
 * - `model`: what the model wrote (assistant messages, calls, reasoning, streamed output).
 */
export type StreamName = 'input' | 'tool' | 'model';
export const STREAMS: readonly StreamName[] = ['input', 'tool', 'model'];

const STREAM_OF_SOURCE: Partial<Record<safetyV1.ItemSource, StreamName>> = {
  [safetyV1.ItemSource.ITEM_SOURCE_INPUT]: 'input',
  [safetyV1.ItemSource.ITEM_SOURCE_TOOL]: 'tool',
  [safetyV1.ItemSource.ITEM_SOURCE_MODEL]: 'model',
};

/**
 * The stream an item belongs to: the source its caller states (the edge knows it from the item it
 * narrowed). An item without one comes from a caller older than the field, during a rolling update:
 * its stream is read from its Responses API type and role, as such callers expected.
 */
export function streamOf(item: Pick<safetyV1.SafetyItem, 'itemType' | 'role' | 'source'>): StreamName {
  return STREAM_OF_SOURCE[item.source] ?? legacyStreamOf(item.itemType, item.role);
}

function legacyStreamOf(itemType: string, role: string): StreamName {
  if (itemType === 'tool_definition' || itemType.endsWith('_output') || itemType.endsWith('_result')) return 'tool';
  if (itemType === 'message') return role === 'assistant' ? 'model' : 'input';
  if (itemType === 'reasoning' || itemType === 'output_text' || itemType.endsWith('_call')) return 'model';
  return 'input';
}
