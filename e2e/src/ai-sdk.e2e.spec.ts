import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import type { Stack } from '@fastloop/launcher';
import { MetricsScrape } from './metrics';
import { startTestStack } from './stack-fixture';

// The Vercel AI SDK (`ai` 6.0.325 with `@ai-sdk/openai` 3.0.141, pinned) through its Responses API
// provider, `openai.responses(model)`: multi-step tool loops where the SDK runs the tools itself.
const MODEL = 'fastloop-sim';
const KEY = 'sk-e2e-aisdk';

let stack: Stack;

beforeAll(async () => {
  stack = await startTestStack({
    FASTLOOP_API_KEYS: `${KEY}:aisdk-tenant`,
    SIM_TOOL_CALLS: '2',
    SIM_ANSWER_WORDS: '150',
  }); // longer than output moderation's held-back window, so text streams in several deltas
}, 300_000); // two starts (one retry) of up to the readiness budget each

afterAll(async () => {
  await stack?.stop();
}, 60_000);

/** Tools the SDK executes locally; each records the input the model gave it. */
function weatherTools(calls: { tool: string; input: unknown }[]) {
  return {
    get_weather: tool({
      description: 'Current weather for a city',
      inputSchema: z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']) }),
      execute: async (input) => {
        calls.push({ tool: 'get_weather', input });
        return { temp: 21, unit: input.unit };
      },
    }),
    get_forecast: tool({
      description: 'Forecast for the next days',
      inputSchema: z.object({ city: z.string(), days: z.number().int().min(1).max(7) }),
      execute: async (input) => {
        calls.push({ tool: 'get_forecast', input });
        return { days: input.days, sky: 'clear' };
      },
    }),
  };
}

/** The provider; `bodies` (when given) collects every request body the SDK sends. */
function provider(bodies?: any[]) {
  return createOpenAI({
    baseURL: `${stack.url}/v1`,
    apiKey: KEY,
    fetch: async (url, init) => {
      if (bodies && typeof init?.body === 'string') bodies.push(JSON.parse(init.body));
      return fetch(url, init);
    },
  });
}

describe('Vercel AI SDK (ai 6 + @ai-sdk/openai 3, Responses API provider)', () => {
  it('generateText runs a three-step tool loop: two validated tool calls, then a text answer', async () => {
    const calls: { tool: string; input: unknown }[] = [];
    const before = await MetricsScrape.of(stack);
    const result = await generateText({
      model: provider().responses(MODEL),
      prompt: 'What is the weather in Paris, and the forecast?',
      tools: weatherTools(calls),
      stopWhen: stepCountIs(5),
      maxRetries: 0,
    });
    expect(result.steps.map((s) => s.finishReason)).toEqual(['tool-calls', 'tool-calls', 'stop']);
    expect(calls).toHaveLength(2);
    expect(new Set(calls.map((c) => c.tool)).size).toBe(2);
    expect(result.steps.flatMap((s) => s.toolResults).length).toBe(2);
    expect(result.text).toMatch(/^Simulated answer after calling get_\w+ and get_\w+ for your request:/);
    expect(result.steps.every((s) => s.response.id.startsWith('resp_'))).toBe(true);
    const after = await MetricsScrape.of(stack);
    expect(
      after.value('fastloop_edge_turns_total', { transport: 'http', status: 'completed' }) -
        before.value('fastloop_edge_turns_total', { transport: 'http', status: 'completed' }),
    ).toBe(3);
    expect(after.value('fastloop_edge_errors_total') - before.value('fastloop_edge_errors_total')).toBe(0);
  });

  it('streamText streams the same loop over SSE, with tool calls and text deltas as stream parts', async () => {
    const calls: { tool: string; input: unknown }[] = [];
    const result = streamText({
      model: provider().responses(MODEL),
      prompt: 'Weather and forecast for Oslo, please.',
      tools: weatherTools(calls),
      stopWhen: stepCountIs(5),
      maxRetries: 0,
    });
    const parts: string[] = [];
    const errors: unknown[] = [];
    let streamed = '';
    for await (const part of result.fullStream) {
      parts.push(part.type);
      if (part.type === 'error') errors.push(part.error);
      if (part.type === 'text-delta') streamed += part.text;
    }
    expect(errors).toEqual([]);
    const steps = await result.steps;
    expect(steps.map((s) => s.finishReason)).toEqual(['tool-calls', 'tool-calls', 'stop']);
    expect(calls).toHaveLength(2);
    expect(parts.filter((p) => p === 'tool-call')).toHaveLength(2);
    expect(parts.filter((p) => p === 'tool-result')).toHaveLength(2);
    // How many deltas carry the answer depends on how fast the client reads (the worker coalesces
    // what a slow reader has not taken yet), so the test checks what the deltas say, in order.
    const text = parts.slice(parts.indexOf('text-start'), parts.lastIndexOf('text-end') + 1);
    expect(text[0]).toBe('text-start');
    expect(text.slice(1, -1).every((p) => p === 'text-delta')).toBe(true);
    expect(text.length).toBeGreaterThan(2);
    expect(streamed).toBe(await result.text);
    expect(streamed).toMatch(/^Simulated answer after calling /);
  });

  it('continues a conversation from its stored messages, which the SDK sends back as item_reference items', async () => {
    const calls: { tool: string; input: unknown }[] = [];
    const bodies: any[] = [];
    const model = provider(bodies).responses(MODEL);
    const first = await generateText({
      model,
      prompt: 'Weather in Rome?',
      tools: weatherTools(calls),
      stopWhen: stepCountIs(5),
      maxRetries: 0,
    });
    expect(first.finishReason).toBe('stop');
    // The next user turn: the SDK resends the tool calls and results and refers to the stored
    // assistant message by id (`store` defaults to true), over plain HTTP without previous_response_id.
    const second = await generateText({
      model,
      messages: [
        { role: 'user', content: 'Weather in Rome?' },
        ...first.response.messages,
        { role: 'user', content: 'And in Milan?' },
      ],
      tools: weatherTools(calls),
      stopWhen: stepCountIs(5),
      maxRetries: 0,
    });
    expect(second.steps.map((s) => s.finishReason)).toEqual(['tool-calls', 'tool-calls', 'stop']);
    expect(second.text).toMatch(/^Simulated answer after calling /);
    expect(calls).toHaveLength(4);
    const references = bodies.flatMap((b) => b.input).filter((i: any) => i.type === 'item_reference');
    expect(references.length).toBeGreaterThan(0);
    expect(references[0].id).toBe(
      first.response.messages
        .flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
        .find((p: any) => p.type === 'text').providerOptions.openai.itemId,
    );
  });
});
