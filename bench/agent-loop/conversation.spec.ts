import { Conversation } from './conversation';
import type { Workload } from './workload';

const workload: Workload = {
  model: 'fastloop-sim',
  instructions: 'Be brief.',
  tools: [],
  userPrompt: 'Fix the bug.',
  toolOutput: (turn, name) => `${name} output ${turn}`,
};

const call = (n: number) => ({
  id: `resp_${n}`,
  output: [{ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: 'grep', arguments: '{}' }],
  usage: { input_tokens: 1, output_tokens: 1 },
});

describe('Conversation', () => {
  it('resends the whole history with store: false in http-stateless mode', () => {
    const c = new Conversation('http-stateless', workload);
    c.accept(call(1), 1);
    c.accept(call(2), 2);
    const body = c.nextBody();
    expect(body).toMatchObject({ model: 'fastloop-sim', instructions: 'Be brief.', store: false });
    expect(body.previous_response_id).toBeUndefined();
    expect((body.input as { type: string }[]).map((i) => i.type)).toEqual([
      'message',
      'function_call',
      'function_call_output',
      'function_call',
      'function_call_output',
    ]);
  });

  it('sends only the new tool output with previous_response_id in the chained modes', () => {
    for (const mode of ['http-previous', 'ws', 'grpc'] as const) {
      const c = new Conversation(mode, workload);
      expect(c.nextBody().previous_response_id).toBeUndefined();
      c.accept(call(1), 1);
      const body = c.nextBody();
      expect(body).toMatchObject({ previous_response_id: 'resp_1', store: mode === 'http-previous', tools: [] });
      expect(body.input).toEqual([{ type: 'function_call_output', call_id: 'call_1', output: 'grep output 1' }]);
    }
  });

  it('ends when the model answers with a message', () => {
    const c = new Conversation('ws', workload);
    c.accept(
      { id: 'resp_9', output: [{ type: 'message', content: [] }], usage: { input_tokens: 1, output_tokens: 1 } },
      1,
    );
    expect(c.done).toBe(true);
    expect(c.toolCalls).toBe(0);
  });
});
