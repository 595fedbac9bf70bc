import type { ParseEvent } from '@fastloop/model-profiles';
import type { OutputSink } from '../safety/output-moderator';

/**
 * Writes the events the output parser made of one TokenChunk to `sink`; true when an output item
 * was opened. Adjacent deltas are merged first, so a chunk yields at most one delta per output
 * item whatever the parser did: every delta is one stream event, one JSON serialisation and one
 * WebSocket frame, ≈ 8.5 µs whatever it carries (apps/edge/bench/relay-frames.bench.ts), and
 * clients concatenate deltas of any size (the Responses API puts no bound on them). Item
 * boundaries stay where the parser put them: text never crosses an item.
 */
export function applyParseEvents(sink: OutputSink, events: readonly ParseEvent[]): boolean {
  let opened = false;
  let text = '';
  for (const ev of events) {
    if (ev.type === 'delta') {
      text += ev.text;
      continue;
    }
    if (text !== '') sink.delta(text);
    text = '';
    if (ev.type === 'item_end') sink.endItem();
    else {
      opened = true;
      switch (ev.item.kind) {
        case 'function_call':
          sink.startFunctionCall(ev.item.name, ev.item.namespace);
          break;
        case 'custom_tool_call':
          sink.startCustomToolCall(ev.item.name, ev.item.namespace);
          break;
        case 'reasoning':
          sink.startReasoning();
          break;
        case 'message':
          sink.startMessage();
          break;
      }
    }
  }
  if (text !== '') sink.delta(text);
  return opened;
}
