import type { ConversationEntry } from '@fastloop/model-profiles';
import { ApiErrors, type InputItem } from '@fastloop/protocol';
import type { CallTarget } from './conversation-state';

/**
 * Converts Responses API items to chat-format entries, resolving each function_call_output's tool
 * from the calls seen so far (`calls` is extended in place with new function_calls). `offset` is
 * the items' index in the whole conversation, for error params.
 */
export function itemsToEntries(items: readonly InputItem[], calls: Map<string, CallTarget>, offset = 0): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  items.forEach((item, i) => {
    const entry = itemToEntry(item, calls, offset + i);
    if (entry) entries.push(entry);
  });
  return entries;
}

function itemToEntry(item: InputItem, calls: Map<string, CallTarget>, index: number): ConversationEntry | undefined {
  const it = item as Record<string, unknown> & { type?: string };
  switch (it.type ?? 'message') {
    case 'message':
      return { kind: 'message', role: it.role as 'user', text: contentText(it.content) };
    case 'function_call': {
      const target: CallTarget = { name: it.name as string, namespace: (it.namespace as string | undefined) ?? undefined };
      calls.set(it.call_id as string, target);
      const entry: ConversationEntry = { kind: 'function_call', name: target.name, arguments: it.arguments as string, callId: it.call_id as string };
      if (target.namespace) entry.namespace = target.namespace;
      return entry;
    }
    case 'function_call_output': {
      const { callId, target } = outputTarget(it, calls, index);
      const entry: ConversationEntry = { kind: 'function_call_output', name: target.name, output: contentText(it.output), callId };
      if (target.namespace) entry.namespace = target.namespace;
      return entry;
    }
    case 'reasoning':
      return { kind: 'reasoning', text: reasoningText(it) };
    default:
      // Other item types (custom tool calls, shell calls, …) are carried in the conversation but this
      // chat format has no rendering for them; the model does not see them.
      return undefined;
  }
}

/**
 * The call a tool output answers. By `call_id` when given; coding agents (Codex CLI) also send
 * outputs with only `name`/`namespace`: those answer the latest call of that tool, and render as
 * that tool's output even when no such call is in the conversation.
 */
function outputTarget(it: Record<string, unknown>, calls: Map<string, CallTarget>, index: number): { callId: string; target: CallTarget } {
  const callId = typeof it.call_id === 'string' ? it.call_id : undefined;
  if (callId !== undefined) {
    const target = calls.get(callId);
    if (!target) throw ApiErrors.invalidRequest(`No tool call found for function call output with call_id ${callId}.`, `input[${index}]`);
    return { callId, target };
  }
  const name = typeof it.name === 'string' ? it.name : undefined;
  if (name === undefined) {
    throw ApiErrors.invalidRequest(`Missing required parameter: 'input[${index}].call_id'.`, `input[${index}].call_id`, 'missing_required_parameter');
  }
  const namespace = typeof it.namespace === 'string' ? it.namespace : undefined;
  let found: [string, CallTarget] | undefined;
  for (const entry of calls) {
    if (entry[1].name === name && (namespace === undefined || entry[1].namespace === namespace)) found = entry;
  }
  if (found) return { callId: found[0], target: found[1] };
  return { callId: '', target: namespace === undefined ? { name } : { name, namespace } };
}

/** Flattens message content (a string or parts) to the text the model reads. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const part of content as { type?: string; text?: string }[]) {
    if (typeof part.text === 'string') parts.push(part.text);
    else if (part.type === 'input_image') parts.push('[image]');
  }
  return parts.join('\n');
}

function reasoningText(item: Record<string, unknown>): string {
  const content = item.content as { text?: string }[] | undefined;
  if (Array.isArray(content) && content.length > 0) return content.map((c) => c.text ?? '').join('\n');
  const summary = item.summary as { text?: string }[] | undefined;
  return Array.isArray(summary) ? summary.map((s) => s.text ?? '').join('\n') : '';
}
