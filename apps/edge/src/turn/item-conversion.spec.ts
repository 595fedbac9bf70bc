import { validateItems } from '@fastloop/protocol';
import type { CallTarget } from './conversation-state';
import { itemsToEntries } from './item-conversion';

const entriesOf = (items: unknown[]) => itemsToEntries(validateItems(items), new Map<string, CallTarget>());

describe('itemsToEntries', () => {
  it('pairs a function_call_output without call_id (as Codex CLI sends it) with the latest call of that tool', () => {
    const entries = entriesOf([
      { type: 'function_call', call_id: 'call_a', name: 'exec', namespace: 'shell', arguments: '{}' },
      { type: 'function_call', call_id: 'call_b', name: 'exec', namespace: 'shell', arguments: '{"x":1}' },
      { type: 'function_call_output', name: 'exec', namespace: 'shell', output: 'done' },
    ]);
    expect(entries[2]).toEqual({ kind: 'function_call_output', name: 'exec', namespace: 'shell', output: 'done', callId: 'call_b' });
  });

  it('renders a call_id-less output as the output of the tool it names when no call of it is in the conversation', () => {
    expect(entriesOf([{ type: 'function_call_output', name: 'exec', output: 'ok' }])).toEqual([
      { kind: 'function_call_output', name: 'exec', output: 'ok', callId: '' },
    ]);
  });

  it('rejects an output with neither call_id nor name as a missing call_id', () => {
    expect(() => entriesOf([{ type: 'function_call_output', output: 'ok' }])).toThrow(
      expect.objectContaining({ code: 'missing_required_parameter', param: 'input[0].call_id' }),
    );
  });

  it('rejects an output whose call_id answers no call', () => {
    expect(() => entriesOf([{ type: 'function_call_output', call_id: 'call_x', output: 'ok' }])).toThrow(expect.objectContaining({ param: 'input[0]' }));
  });
});
