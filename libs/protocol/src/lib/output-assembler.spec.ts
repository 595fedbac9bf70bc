import fc from 'fast-check';
import { EventStream } from './event-stream';
import { OutputAssembler } from './output-assembler';
import { ResponseStreamEventSchema, type ResponseStreamEvent } from './stream-event-schema';

function setup() {
  const events: ResponseStreamEvent[] = [];
  const assembler = new OutputAssembler(new EventStream(), (event) => events.push(event));
  return { events, assembler };
}

/** Checks what every sequence must satisfy: numbers 0..n-1 in order, every event strictly shaped. */
function expectWellFormed(events: ResponseStreamEvent[]): void {
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  for (const event of events) expect(ResponseStreamEventSchema.parse(event)).toEqual(event);
}

describe('OutputAssembler', () => {
  it('streams a text message as added → part added → deltas → text done → part done → item done', () => {
    const { events, assembler } = setup();
    const id = assembler.startMessage();
    assembler.appendText('Hel');
    assembler.appendText('lo');
    assembler.endItem();

    expect(events.map((e) => e.type)).toEqual([
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
    ]);
    expectWellFormed(events);
    expect(id).toMatch(/^msg_/);
    expect(events[0]).toMatchObject({
      output_index: 0,
      item: { id, type: 'message', role: 'assistant', status: 'in_progress', content: [] },
    });
    expect(events[1]).toMatchObject({
      item_id: id,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '' },
    });
    expect(events[3]).toMatchObject({ item_id: id, delta: 'lo', logprobs: [] });
    expect(events[4]).toMatchObject({ text: 'Hello', logprobs: [] });
    expect(events[5]).toMatchObject({ part: { type: 'output_text', text: 'Hello', annotations: [], logprobs: [] } });
    const message = {
      id,
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Hello', annotations: [], logprobs: [] }],
    };
    expect(events[6]).toEqual({
      type: 'response.output_item.done',
      sequence_number: 6,
      output_index: 0,
      item: message,
    });
    expect(assembler.output).toEqual([message]);
  });

  it('streams a function call with empty arguments first, then deltas, done with name, item done', () => {
    const { events, assembler } = setup();
    const { itemId, callId } = assembler.startFunctionCall('exec_command', 'shell');
    assembler.appendArguments('{"cmd":');
    assembler.appendArguments('"ls"}');
    assembler.endItem();

    expect(events.map((e) => e.type)).toEqual([
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
    ]);
    expectWellFormed(events);
    expect(itemId).toMatch(/^fc_/);
    expect(callId).toMatch(/^call_/);
    expect(events[0]).toMatchObject({
      item: {
        id: itemId,
        type: 'function_call',
        status: 'in_progress',
        call_id: callId,
        name: 'exec_command',
        namespace: 'shell',
        arguments: '',
      },
    });
    expect(events[3]).toMatchObject({
      item_id: itemId,
      output_index: 0,
      name: 'exec_command',
      arguments: '{"cmd":"ls"}',
    });
    expect(assembler.output).toEqual([
      {
        id: itemId,
        type: 'function_call',
        status: 'completed',
        call_id: callId,
        name: 'exec_command',
        namespace: 'shell',
        arguments: '{"cmd":"ls"}',
      },
    ]);
  });

  it('streams a custom tool call as plain-text input with custom_tool_call_input events', () => {
    const { events, assembler } = setup();
    const { itemId, callId } = assembler.startCustomToolCall('apply_patch');
    assembler.appendInput('*** Begin Patch\n');
    assembler.appendInput('*** End Patch');
    assembler.endItem();

    expect(events.map((e) => e.type)).toEqual([
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
    ]);
    expectWellFormed(events);
    expect(itemId).toMatch(/^ctc_/);
    expect(events[0]).toMatchObject({
      item: {
        id: itemId,
        type: 'custom_tool_call',
        status: 'in_progress',
        call_id: callId,
        name: 'apply_patch',
        input: '',
      },
    });
    expect(events[3]).toMatchObject({ item_id: itemId, output_index: 0, input: '*** Begin Patch\n*** End Patch' });
    expect(assembler.output).toEqual([
      {
        id: itemId,
        type: 'custom_tool_call',
        status: 'completed',
        call_id: callId,
        name: 'apply_patch',
        input: '*** Begin Patch\n*** End Patch',
      },
    ]);
  });

  it('leaves namespace off calls to top-level tools', () => {
    const { assembler } = setup();
    assembler.startFunctionCall('f', undefined, 'call_fixed');
    expect(assembler.endItem()).not.toHaveProperty('namespace');
    expect(assembler.output[0]).toMatchObject({ call_id: 'call_fixed' });
  });

  it('puts reasoning first and indexes later items after it', () => {
    const { events, assembler } = setup();
    const rs = assembler.startReasoning();
    assembler.appendReasoning('Think.');
    assembler.endItem({ encryptedContent: 'opaque' });
    assembler.startMessage();
    assembler.appendText('Answer.');
    assembler.startFunctionCall('f'); // ends the message first
    assembler.finish();

    expectWellFormed(events);
    expect(events.slice(0, 6).map((e) => e.type)).toEqual([
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
    ]);
    expect(assembler.output.map((item) => item.type)).toEqual(['reasoning', 'message', 'function_call']);
    expect(assembler.output[0]).toEqual({
      id: rs,
      type: 'reasoning',
      summary: [],
      content: [{ type: 'reasoning_text', text: 'Think.' }],
      encrypted_content: 'opaque',
    });
    const done = events.filter((e) => e.type === 'response.output_item.done');
    expect(done.map((e) => e.output_index)).toEqual([0, 1, 2]);
  });

  it('marks an item cut short as incomplete', () => {
    const { assembler } = setup();
    assembler.startMessage();
    assembler.appendText('partial');
    expect(assembler.finish({ status: 'incomplete' })[0]).toMatchObject({ status: 'incomplete' });
  });

  it('emits nothing for empty deltas', () => {
    const { events, assembler } = setup();
    assembler.startMessage();
    const before = events.length;
    assembler.appendText('');
    expect(events).toHaveLength(before);
  });

  it('refuses deltas for an item that is not open', () => {
    const { assembler } = setup();
    expect(() => assembler.appendText('x')).toThrow(/no message item is open/);
    assembler.startFunctionCall('f');
    expect(() => assembler.appendReasoning('x')).toThrow(/open: function_call/);
    expect(assembler.openItemType).toBe('function_call');
  });

  it('treats endItem with nothing open as a no-op', () => {
    const { events, assembler } = setup();
    expect(assembler.endItem()).toBeUndefined();
    expect(events).toEqual([]);
  });

  it('never lets a later change alter an event already emitted', () => {
    const { events, assembler } = setup();
    assembler.startMessage();
    assembler.appendText('a');
    const snapshot = JSON.stringify(events);
    assembler.appendText('b');
    assembler.endItem();
    expect(JSON.stringify(events.slice(0, 3))).toBe(snapshot);
  });

  it('makes the done text equal the concatenated deltas, for any chunking', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 20 }), (chunks) => {
        const { events, assembler } = setup();
        assembler.startMessage();
        for (const chunk of chunks) assembler.appendText(chunk);
        assembler.endItem();
        const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
        const done = events.find((e) => e.type === 'response.output_text.done');
        expect(deltas.join('')).toBe(chunks.join(''));
        expect(done).toMatchObject({ text: chunks.join('') });
        expect(assembler.output[0]).toMatchObject({ content: [{ text: chunks.join('') }] });
      }),
      { numRuns: 200 },
    );
  });
});
