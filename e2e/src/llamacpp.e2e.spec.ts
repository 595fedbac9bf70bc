import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { modelStack, type Stack } from '@fastloop/launcher';
import { openaiClient, useStack, WsConversation } from './clients';
import { startTestStack } from './stack-fixture';
import { describeWhenAvailable, schemaProblems, testModel } from '@fastloop/test-kit';

// The real model: stories260K through llama.cpp (INFERENCE_ENGINE=llamacpp), one thread, tiny prompts.
const testModelFile = testModel();
const MODEL = testModelFile.path;
const describeModel = describeWhenAvailable(testModelFile);

// A smaller weather tool: with weatherTool's schema the prompt alone takes ~450 of stories260K's 512
// tokens (its vocabulary has 512 pieces), leaving too little room to finish the call.
const compactWeatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  strict: true,
  parameters: {
    type: 'object',
    properties: { city: { type: 'string', maxLength: 16 } },
    required: ['city'],
    additionalProperties: false,
  },
};

let stack: Stack | undefined;
let modelId = '';

/** A counter of the inference worker, summed over the label sets that contain `label`. */
async function workerCounter(name: string, label = ''): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${stack!.services.inference.ports.admin}/metrics`);
  let sum = 0;
  for (const m of (await res.text()).matchAll(new RegExp(`^\\w*${name}(\\{[^}]*\\})? (\\d+(?:\\.\\d+)?)$`, 'gm'))) {
    if ((m[1] ?? '').includes(label)) sum += Number(m[2]);
  }
  return sum;
}

// The generation prompt (`<|im_start|>assistant\n`) is part of a turn's prompt, but an empty answer
// leaves no assistant entry in the next one: a continuation reuses at least the rest.
const GENERATION_PROMPT_SLACK = 10;

const completed = (events: Array<{ type: string; [k: string]: any }>) => {
  const last = events[events.length - 1];
  if (last.type !== 'response.completed' && last.type !== 'response.incomplete')
    throw new Error(`turn ended with ${JSON.stringify(last).slice(0, 300)}`);
  return last.response;
};

describeModel('a real model behind the worker (llamacpp on stories260K)', () => {
  beforeAll(async () => {
    const served = await modelStack(MODEL, mkdtempSync(join(tmpdir(), 'fastloop-llamacpp-')));
    modelId = served.modelId;
    // Output moderation holds back the last 255 characters until its verdict, more than this tiny
    // model's 20-token answers, so with it a streamed answer arrives in one release (one delta);
    // moderation itself is covered on the sim (safety.e2e). Here the engine's own streaming shows.
    stack = await startTestStack({ ...served.env, LLAMACPP_SEQUENCES: '4', EDGE_OUTPUT_MODERATION: 'false' });
    useStack(stack);
  }, 300_000); // two starts (one retry) of up to the readiness budget each

  afterAll(async () => {
    if (stack) process.stderr.write(`llamacpp e2e stack logs: ${stack.logDir}\n`);
    await stack?.stop();
  }, 60_000);

  it('lists the model file under its name and answers over HTTP with tokens the model sampled', async () => {
    const client = openaiClient();
    expect((await client.models.list()).data.map((m) => m.id)).toEqual([modelId]);
    const r = await client.responses.create({ model: modelId, input: 'Once upon a time', max_output_tokens: 24 });
    expect(r.output_text.length).toBeGreaterThan(0);
    expect(r.usage?.output_tokens).toBeGreaterThan(0);
    expect(r.usage?.output_tokens).toBeLessThanOrEqual(24);
  });

  it('streams the answer over SSE delta by delta', async () => {
    const stream = await openaiClient().responses.create({
      model: modelId,
      input: 'The dog',
      max_output_tokens: 20,
      stream: true,
    });
    let deltas = 0;
    let text = '';
    let done: string | undefined;
    for await (const e of stream) {
      if (e.type === 'response.output_text.delta') {
        deltas++;
        text += e.delta;
      }
      // Cut at max_output_tokens it ends incomplete; either way the terminal event has the whole output.
      if (e.type === 'response.completed' || e.type === 'response.incomplete')
        done = e.response.output
          .flatMap((o) => (o.type === 'message' ? o.content : []))
          .map((c) => (c.type === 'output_text' ? c.text : ''))
          .join('');
    }
    // As many deltas as the reader's pace allows (the worker coalesces tokens a slow reader has not
    // taken): at least one, and together exactly the answer.
    expect(deltas).toBeGreaterThan(0);
    expect(text.trim().length).toBeGreaterThan(0);
    expect(text).toBe(done);
  });

  it('returns a schema-valid function call when a tool call is required (grammar from the schema)', async () => {
    const r = await openaiClient().responses.create({
      model: modelId,
      input: 'Weather in Paris?',
      tools: [compactWeatherTool],
      tool_choice: 'required',
    });
    const call = r.output.find((o) => o.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather' });
    expect(
      schemaProblems(compactWeatherTool.parameters, JSON.parse((call as { arguments: string }).arguments)),
    ).toEqual([]);
  });

  it('evaluates only the new tokens of a WebSocket continuation; cached_tokens is the engine skip', async () => {
    const ws = new WsConversation();
    try {
      const first = completed(
        await ws.create({ model: modelId, input: 'Tom had a ball.', max_output_tokens: 16, store: false }),
      );
      const evaluatedBefore = await workerCounter('inference_engine_evaluated_tokens_total');
      const second = completed(
        await ws.create({
          model: modelId,
          previous_response_id: first.id,
          input: 'Then?',
          max_output_tokens: 16,
          store: false,
        }),
      );
      const evaluated = (await workerCounter('inference_engine_evaluated_tokens_total')) - evaluatedBefore;
      const cached = second.usage.input_tokens_details.cached_tokens;
      expect(cached).toBeGreaterThanOrEqual(first.usage.input_tokens - GENERATION_PROMPT_SLACK);
      expect(evaluated).toBe(second.usage.input_tokens - cached);
    } finally {
      ws.close();
    }
  });

  it('keeps two concurrent sessions in separate KV sequences', async () => {
    const a = new WsConversation();
    const b = new WsConversation();
    try {
      const [a1, b1] = await Promise.all([
        a
          .create({
            model: modelId,
            input: 'A cat sat on the mat all day long and slept.',
            max_output_tokens: 16,
            store: false,
          })
          .then(completed),
        b
          .create({
            model: modelId,
            input: 'Ben and his big red dog ran to the park to play.',
            max_output_tokens: 16,
            store: false,
          })
          .then(completed),
      ]);
      const [a2, b2] = await Promise.all([
        a
          .create({ model: modelId, previous_response_id: a1.id, input: 'And?', max_output_tokens: 16, store: false })
          .then(completed),
        b
          .create({ model: modelId, previous_response_id: b1.id, input: 'And?', max_output_tokens: 16, store: false })
          .then(completed),
      ]);
      // Each continuation found its own conversation in the KV, far beyond the few header tokens the
      // two conversations share (what it would get from the other one's sequence).
      expect(a2.usage.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(
        a1.usage.input_tokens - GENERATION_PROMPT_SLACK,
      );
      expect(b2.usage.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(
        b1.usage.input_tokens - GENERATION_PROMPT_SLACK,
      );
    } finally {
      a.close();
      b.close();
    }
  });

  it('stops evaluating when the client cancels mid-stream', async () => {
    const before = await workerCounter('inference_completion_tokens_total');
    const cancelledBefore = await workerCounter('inference_requests_total', 'outcome="cancelled"');
    const controller = new AbortController();
    const stream = await openaiClient().responses.create(
      { model: modelId, input: 'Lily', max_output_tokens: 400, stream: true },
      { signal: controller.signal },
    );
    try {
      // Cancel as early as possible: on a loaded machine the cancel takes a while to reach the
      // worker, and the whole 400 tokens take only ~0.4 s on this model.
      for await (const e of stream)
        if (e.type === 'response.created' || e.type === 'response.output_text.delta') controller.abort();
    } catch {
      // the SDK rejects the iteration on abort
    }
    let cancelled = cancelledBefore;
    for (let i = 0; i < 50 && cancelled === cancelledBefore; i++) {
      await new Promise((r) => setTimeout(r, 100));
      cancelled = await workerCounter('inference_requests_total', 'outcome="cancelled"');
    }
    expect(cancelled).toBe(cancelledBefore + 1);
    expect((await workerCounter('inference_completion_tokens_total')) - before).toBeLessThan(400);
  });
});
