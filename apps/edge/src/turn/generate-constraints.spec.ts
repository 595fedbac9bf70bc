import { generateConstraints } from './generate-constraints';

const offered = { tools: [{ name: 'read_file', parameters: { type: 'object' as const } }] };
const none = { tools: [] };

describe('generateConstraints', () => {
  it('forces nothing for auto, none and plain text', () => {
    expect(generateConstraints({ tool_choice: 'auto' }, offered)).toBeUndefined();
    expect(generateConstraints({ tool_choice: 'none', text: { format: { type: 'text' } } }, none)).toBeUndefined();
  });

  it('carries required and a named function or custom tool when tools are offered', () => {
    expect(generateConstraints({ tool_choice: 'required' }, offered)).toEqual({
      toolChoice: 'required',
      responseFormatJson: '',
    });
    expect(generateConstraints({ tool_choice: { type: 'function', name: 'read_file' } }, offered)?.toolChoice).toBe(
      'read_file',
    );
    expect(
      generateConstraints({ tool_choice: { type: 'custom', name: 'apply_patch' } as never }, offered)?.toolChoice,
    ).toBe('apply_patch');
  });

  it('drops a tool choice when no tool is offered', () => {
    expect(generateConstraints({ tool_choice: 'required' }, none)).toBeUndefined();
  });

  it('carries a JSON text format as JSON', () => {
    const format = { type: 'json_schema' as const, name: 'answer', schema: { type: 'object' }, strict: true };
    expect(
      JSON.parse(generateConstraints({ tool_choice: 'auto', text: { format } }, offered)!.responseFormatJson),
    ).toEqual(format);
    expect(generateConstraints({ tool_choice: 'auto', text: { format: { type: 'json_object' } } }, none)).toEqual({
      toolChoice: '',
      responseFormatJson: '{"type":"json_object"}',
    });
  });
});
