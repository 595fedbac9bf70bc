import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { modelStack, type Stack } from '@fastloop/launcher';
import { describeWhenAvailable, testModel } from '@fastloop/test-kit';
import { openaiClient, useStack, WsConversation } from './clients';
import { startTestStack } from './stack-fixture';

// Compaction's summary written by a real model: stories260K through llama.cpp, one thread.
const testModelFile = testModel();
const describeModel = describeWhenAvailable(testModelFile);
const SUMMARY_TOKENS = 24;

let stack: Stack | undefined;
let modelId = '';

const user = (text: string) => ({ type: 'message' as const, role: 'user' as const, content: text });
const story = user('Tom and Lily went to the park to play with a big red ball. '.repeat(12));

const terminal = (events: Array<{ type: string; [k: string]: any }>) => {
  const last = events[events.length - 1];
  if (last.type !== 'response.completed' && last.type !== 'response.incomplete')
    throw new Error(`turn ended with ${JSON.stringify(last).slice(0, 300)}`);
  return { response: last.response, events };
};

describeModel('compaction on a real model (llamacpp on stories260K)', () => {
  beforeAll(async () => {
    const served = await modelStack(testModelFile.path, mkdtempSync(join(tmpdir(), 'fastloop-compaction-')), {
      contextSize: 1024,
    });
    modelId = served.modelId;
    stack = await startTestStack({
      ...served.env,
      EDGE_OUTPUT_MODERATION: 'false',
      EDGE_COMPACTION_MAX_OUTPUT_TOKENS: String(SUMMARY_TOKENS),
    });
    useStack(stack);
  }, 300_000);

  afterAll(async () => {
    if (stack) process.stderr.write(`compaction llamacpp e2e stack logs: ${stack.logDir}\n`);
    await stack?.stop();
  }, 60_000);

  it('summarises with the model: responses.compact bills sampled tokens within EDGE_COMPACTION_MAX_OUTPUT_TOKENS', async () => {
    const compacted = await openaiClient().responses.compact({ model: modelId, input: [story, user('Then?')] });
    expect(compacted.output.map((i) => i.type)).toEqual(['message', 'message', 'compaction']);
    expect(compacted.usage.output_tokens).toBeGreaterThan(0);
    expect(compacted.usage.output_tokens).toBeLessThanOrEqual(SUMMARY_TOKENS);
    const back = await openaiClient().responses.create({
      model: modelId,
      store: false,
      max_output_tokens: 16,
      input: [compacted.output[2] as never, user('And then?')],
    });
    expect(['completed', 'incomplete']).toContain(back.status);
  });

  it('compacts in-line over WebSocket and the next turn continues on the compacted window', async () => {
    const ws = new WsConversation();
    try {
      const first = terminal(
        await ws.create({ model: modelId, store: false, max_output_tokens: 16, input: [story] }),
      ).response;
      const second = terminal(
        await ws.create({
          model: modelId,
          store: false,
          max_output_tokens: 16,
          previous_response_id: first.id,
          input: [user('What did they do?')],
          context_management: [{ type: 'compaction', compact_threshold: 100 }],
        }),
      );
      expect(second.events[2]).toMatchObject({ type: 'response.output_item.added', item: { type: 'compaction' } });
      expect(second.response.usage.input_tokens).toBeLessThan(first.usage.input_tokens);
      const third = terminal(
        await ws.create({
          model: modelId,
          store: false,
          max_output_tokens: 16,
          previous_response_id: second.response.id,
          input: [user('The end.')],
        }),
      ).response;
      // The worker holds the compacted window's session: the continuation prefills only what is new.
      expect(third.usage.input_tokens_details.cached_tokens).toBeGreaterThan(second.response.usage.input_tokens / 2);
    } finally {
      ws.close();
    }
  });
});
