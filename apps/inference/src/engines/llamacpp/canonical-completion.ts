import type { ConversationEntry, ModelProfile, ParseEvent } from '@fastloop/model-profiles';

/**
 * The tokens the next turn's prompt will hold for a completion: its output items read back with
 * the profile's own parser (as the edge reads them) and rendered as the edge renders history (the
 * first item after the generation prompt, the rest as entries of their own). The model samples
 * a tokenization of its own choosing; the chat template renders the same text its way, so a KV
 * that keeps the sampled tokens misses from the first difference on. Undefined when the profile
 * cannot render what was sampled (the engine then keeps what it sampled).
 */
export function canonicalCompletion(profile: ModelProfile, completion: readonly number[]): number[] | undefined {
  try {
    const parser = profile.createOutputParser();
    const entries = entriesOf([...parser.push(completion), ...parser.finish()]);
    if (entries.length === 0) return [];
    const tokens = profile.renderCompletion(entries[0]);
    for (const e of entries.slice(1)) for (const t of profile.renderEntry(e)) tokens.push(t);
    return tokens;
  } catch {
    return undefined;
  }
}

/** Parse events as conversation entries (call ids are the edge's and never rendered by templates we read). */
function entriesOf(events: readonly ParseEvent[]): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  let open: Extract<ParseEvent, { type: 'item_start' }>['item'] | undefined;
  let text = '';
  const close = () => {
    if (!open) return;
    if (open.kind === 'message') entries.push({ kind: 'message', role: 'assistant', text });
    else if (open.kind === 'function_call' || open.kind === 'custom_tool_call') {
      const { name, namespace } = open;
      const base = { name, ...(namespace !== undefined ? { namespace } : {}), callId: `call_${entries.length}` };
      entries.push(
        open.kind === 'function_call'
          ? { kind: 'function_call', ...base, arguments: text }
          : { kind: 'custom_tool_call', ...base, input: text },
      );
    }
    open = undefined;
    text = '';
  };
  for (const e of events) {
    if (e.type === 'item_start') {
      close();
      open = e.item;
    } else if (e.type === 'delta') text += e.text;
    else close();
  }
  close();
  return entries;
}
