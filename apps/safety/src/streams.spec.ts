import { safetyV1 } from '@fastloop/proto';
import { streamOf } from './streams';

const { ITEM_SOURCE_UNSPECIFIED, ITEM_SOURCE_INPUT, ITEM_SOURCE_TOOL, ITEM_SOURCE_MODEL } = safetyV1.ItemSource;

describe('streamOf', () => {
  it('puts an item in the stream of the source its caller states, whatever its type is called', () => {
    expect(streamOf({ itemType: 'function_call_output', role: '', source: ITEM_SOURCE_INPUT })).toBe('input');
    expect(streamOf({ itemType: 'message', role: 'user', source: ITEM_SOURCE_TOOL })).toBe('tool');
    expect(streamOf({ itemType: 'a_type_from_the_future', role: '', source: ITEM_SOURCE_MODEL })).toBe('model');
  });

  it('reads the stream of an item without a source from its type and role, as callers before the field expected', () => {
    const legacy = (itemType: string, role = '') => streamOf({ itemType, role, source: ITEM_SOURCE_UNSPECIFIED });
    expect(legacy('message', 'user')).toBe('input');
    expect(legacy('message', 'assistant')).toBe('model');
    expect(legacy('instructions', 'developer')).toBe('input');
    expect(legacy('tool_definition')).toBe('tool');
    expect(legacy('function_call_output')).toBe('tool');
    expect(legacy('web_search_call')).toBe('model');
    expect(legacy('output_text', 'assistant')).toBe('model');
    expect(legacy('a_type_from_the_future')).toBe('input');
  });
});
