import { stackForThisFile } from './file-stack';
import { expectWellFormedStream, openaiClient, WsConversation } from './clients';
import { openSession } from './grpc-session';
import { weatherTool } from './stack-fixture';

const MODEL = 'fastloop-sim';

stackForThisFile();

const user = (text: string) => ({ type: 'message' as const, role: 'user' as const, content: text });
const history = [
  user('Refactor the parser in src/parser.ts so it streams tokens.'),
  { type: 'message' as const, role: 'assistant' as const, content: 'I will start with the tokenizer.' },
  user('Also keep the public API unchanged.'),
];

/** A compaction window made by `POST /v1/responses/compact` through the official SDK. */
async function compactedWindow(key?: string) {
  const compacted = await openaiClient(key).responses.compact({ model: MODEL, input: history });
  return compacted;
}

function tamper(blob: string): string {
  return blob.slice(0, -2) + (blob.endsWith('AA') ? 'BA' : 'AA');
}

describe('compaction (openai-node responses.compact, then the window sent back on every transport)', () => {
  it('answers responses.compact with the user messages and one sealed compaction item, with usage', async () => {
    const compacted = await compactedWindow();
    expect(compacted.object).toBe('response.compaction');
    expect(compacted.output.map((i) => i.type)).toEqual(['message', 'message', 'compaction']);
    expect(compacted.output[0]).toMatchObject({
      role: 'user',
      content: [{ type: 'input_text', text: history[0].content }],
    });
    const item = compacted.output[2] as { encrypted_content: string; id: string };
    expect(item.id).toMatch(/^cmp_/);
    expect(item.encrypted_content).toMatch(/^fl1\./);
    expect(compacted.usage.input_tokens).toBeGreaterThan(0);
    expect(compacted.usage.output_tokens).toBeGreaterThan(0);
  });

  it('renders the summary for the model when the window comes back over HTTP (a new chain)', async () => {
    const compacted = await compactedWindow();
    const client = openaiClient();
    const withSummary = await client.responses.create({
      model: MODEL,
      store: false,
      input: [...(compacted.output as never[]), user('Continue.')],
    });
    const without = await client.responses.create({
      model: MODEL,
      store: false,
      input: [...(compacted.output.slice(0, 2) as never[]), user('Continue.')],
    });
    expect(withSummary.status).toBe('completed');
    expect(withSummary.previous_response_id).toBeNull();
    // The compaction item reads as the summary's tokens, not as nothing.
    expect(withSummary.usage!.input_tokens).toBeGreaterThan(without.usage!.input_tokens + 5);
  });

  it('answers a tampered compaction item, or another tenant’s, with a 400 naming it', async () => {
    const compacted = await compactedWindow();
    const item = compacted.output[2] as { encrypted_content: string };
    const altered = openaiClient().responses.create({
      model: MODEL,
      input: [user('q'), { ...item, encrypted_content: tamper(item.encrypted_content) } as never],
    });
    await expect(altered).rejects.toMatchObject({
      status: 400,
      code: 'invalid_encrypted_content',
      param: 'input[1].encrypted_content',
    });
    const foreign = openaiClient('sk-e2e-other').responses.create({ model: MODEL, input: [user('q'), item as never] });
    await expect(foreign).rejects.toMatchObject({ status: 400, code: 'invalid_encrypted_content' });
  });

  it('takes the window over WebSocket, and a tampered one is an error frame on a socket that stays open', async () => {
    const compacted = await compactedWindow();
    const conv = new WsConversation();
    try {
      const item = compacted.output[2] as { encrypted_content: string };
      const bad = await conv.create({
        model: MODEL,
        store: false,
        input: [user('q'), { ...item, encrypted_content: tamper(item.encrypted_content) }],
      });
      expect(bad).toEqual([
        expect.objectContaining({
          type: 'error',
          status: 400,
          error: expect.objectContaining({ code: 'invalid_encrypted_content' }),
        }),
      ]);
      const ok = expectWellFormedStream(
        await conv.create({ model: MODEL, store: false, input: [...compacted.output, user('Continue.')] }),
      );
      expect(ok.type).toBe('response.completed');
    } finally {
      conv.close();
    }
  });

  it('takes the window over the gRPC bidi stream', async () => {
    const compacted = await compactedWindow();
    const s = openSession();
    try {
      const done = expectWellFormedStream(
        await s.create({ model: MODEL, store: false, input: [...compacted.output, user('Continue.')] }),
      );
      expect(done.type).toBe('response.completed');
      const item = compacted.output[2] as { encrypted_content: string };
      const bad = await s.create({
        model: MODEL,
        input: [user('q'), { ...item, encrypted_content: tamper(item.encrypted_content) }],
      });
      expect(bad[0]).toMatchObject({ type: 'error', status: 400, error: { code: 'invalid_encrypted_content' } });
    } finally {
      s.close();
    }
  });
});

describe('context_management compaction in-line', () => {
  const longTask = user('Survey the repository and report. ' + 'Read every module carefully. '.repeat(60));
  const contextManagement = [{ type: 'compaction', compact_threshold: 300 }];

  /** A two-turn conversation on one transport whose second turn passes the threshold. */
  async function compactOn(create: (body: Record<string, unknown>) => Promise<any[]>) {
    const first = expectWellFormedStream(await create({ model: MODEL, store: false, input: [longTask] })).response;
    const events = await create({
      model: MODEL,
      store: false,
      previous_response_id: first.id,
      input: [user('Now summarise what you found.')],
      context_management: contextManagement,
    });
    const second = expectWellFormedStream(events);
    expect(events[2]).toMatchObject({ type: 'response.output_item.added', item: { type: 'compaction' } });
    expect(events[3]).toMatchObject({ type: 'response.output_item.done', item: { type: 'compaction' } });
    expect(second.response.output[0].type).toBe('compaction');
    expect(second.response.previous_response_id).toBe(first.id);
    // The model read the window, not the long first task.
    expect(second.response.usage.input_tokens).toBeLessThan(first.usage.input_tokens);
    // Continuing by previous_response_id extends the window on the worker.
    const third = expectWellFormedStream(
      await create({ model: MODEL, store: false, previous_response_id: second.response.id, input: [user('Thanks.')] }),
    ).response;
    expect(third.status).toBe('completed');
    expect(third.usage.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    expect(third.usage.input_tokens).toBeLessThan(first.usage.input_tokens + second.response.usage.input_tokens);
    return second.response;
  }

  it('compacts over WebSocket: the stream carries the compaction item, and the chain goes on from the window', async () => {
    const conv = new WsConversation();
    try {
      await compactOn((body) => conv.create(body));
    } finally {
      conv.close();
    }
  });

  it('compacts on a compaction_trigger item over WebSocket: the response is the compaction alone', async () => {
    const conv = new WsConversation();
    try {
      const first = expectWellFormedStream(
        await conv.create({ model: MODEL, store: false, input: [longTask] }),
      ).response;
      const compacted = expectWellFormedStream(
        await conv.create({
          model: MODEL,
          store: false,
          previous_response_id: first.id,
          input: [{ type: 'compaction_trigger' }],
        }),
      ).response;
      expect(compacted.output.map((i: { type: string }) => i.type)).toEqual(['compaction']);
      const next = expectWellFormedStream(
        await conv.create({ model: MODEL, store: false, previous_response_id: compacted.id, input: [user('Go on.')] }),
      ).response;
      expect(next.usage.input_tokens).toBeLessThan(first.usage.input_tokens);
    } finally {
      conv.close();
    }
  });

  it('compacts over the gRPC bidi stream alike', async () => {
    const s = openSession();
    try {
      await compactOn((body) => s.create(body));
    } finally {
      s.close();
    }
  });

  it('stores a compacted response as the root of its window: an HTTP chain from the store goes on from the window', async () => {
    const client = openaiClient();
    const first = await client.responses.create({ model: MODEL, input: [longTask] });
    const second = await client.responses.create({
      model: MODEL,
      previous_response_id: first.id,
      input: [user('Now summarise what you found.')],
      context_management: contextManagement,
    } as never);
    expect(second.output[0].type).toBe('compaction');
    expect(second.previous_response_id).toBe(first.id);
    // Read back from Redis (HTTP has no connection cache): the window, not the long task, continues.
    const third = await client.responses.create({ model: MODEL, previous_response_id: second.id, input: 'Thanks.' });
    expect(third.status).toBe('completed');
    expect(third.usage!.input_tokens).toBeLessThan(first.usage!.input_tokens);
    const stored = await client.responses.retrieve(second.id);
    expect(stored.output.map((i) => i.type)).toEqual(second.output.map((i) => i.type));
    const items = await client.responses.inputItems.list(second.id);
    expect(items.data.map((i) => i.type)).toContain('compaction');
  });

  it('compacts a stateless HTTP request whose input passes the threshold, with tools offered', async () => {
    const r = await openaiClient().responses.create({
      model: MODEL,
      store: false,
      tools: [weatherTool],
      input: [longTask, { type: 'message', role: 'assistant', content: 'Done reading.' }, user('Weather in Oslo?')],
      context_management: contextManagement,
    } as never);
    expect(r.status).toBe('completed');
    expect(r.output.map((i) => i.type)).toEqual(['compaction', 'function_call']);
  });
});
