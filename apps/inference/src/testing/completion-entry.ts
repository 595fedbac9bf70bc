import type { ConversationEntry, ModelProfile, ToolSpec } from '@fastloop/model-profiles';

/**
 * Reads a sampled completion back into the entry it represents, with the profile's own output
 * parser (as the edge would), so tests can append it to the conversation and take the next turn.
 */
export function completionToEntry(
  profile: ModelProfile,
  tokens: readonly number[],
  callId: string,
  tools: readonly ToolSpec[] = [],
): ConversationEntry {
  const parser = profile.createOutputParser(tools);
  const events = [...parser.push(tokens), ...parser.finish()];
  const start = events.find((e) => e.type === 'item_start');
  const text = events.map((e) => (e.type === 'delta' ? e.text : '')).join('');
  if (start?.type !== 'item_start') throw new Error('completion holds no item');
  if (start.item.kind === 'function_call') {
    const { name, namespace } = start.item;
    return { kind: 'function_call', name, ...(namespace !== undefined ? { namespace } : {}), arguments: text, callId };
  }
  if (start.item.kind === 'custom_tool_call') {
    const { name, namespace } = start.item;
    return { kind: 'custom_tool_call', name, ...(namespace !== undefined ? { namespace } : {}), input: text, callId };
  }
  return { kind: 'message', role: 'assistant', text };
}

/** The tool output a test feeds back for a function or custom tool call entry. */
export function toolOutputFor(
  call: Extract<ConversationEntry, { kind: 'function_call' | 'custom_tool_call' }>,
  output: string,
): ConversationEntry {
  return {
    kind: 'function_call_output',
    name: call.name,
    ...(call.namespace !== undefined ? { namespace: call.namespace } : {}),
    output,
    callId: call.callId,
  };
}
