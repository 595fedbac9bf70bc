import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Stack } from '@fastloop/launcher';
import { schemaProblems } from '@fastloop/test-kit';
import { MetricsScrape } from './metrics';
import { startTestStack, weatherTool } from './stack-fixture';

// The official openai Python SDK (pinned in e2e/python/requirements.txt, installed into a venv by
// e2e/python/setup-venv.sh) runs a streamed tool loop and retrieves the stored result.
const run = promisify(execFile);
const ROOT = resolve(__dirname, '../..');
const VENV = process.env.FASTLOOP_E2E_VENV ?? join(ROOT, '.fastloop', 'e2e-venv');
const MODEL = 'fastloop-sim';

let stack: Stack;

beforeAll(async () => {
  // A no-op when the venv matches requirements.txt (CI's .ci/run builds it before the tests).
  await run('bash', [join(ROOT, 'e2e/python/setup-venv.sh')], { env: { ...process.env, FASTLOOP_E2E_VENV: VENV } });
  stack = await startTestStack({ FASTLOOP_API_KEYS: 'sk-e2e-python:python-tenant', SIM_TOOL_CALLS: '2' });
}, 300_000);

afterAll(async () => {
  await stack?.stop();
}, 60_000);

describe('openai Python SDK (3.22.1)', () => {
  it('streams a tool loop with responses.create chained by previous_response_id, then responses.retrieve returns the result', async () => {
    const before = await MetricsScrape.of(stack);
    const { stdout } = await run(
      join(VENV, 'bin', 'python'),
      [join(ROOT, 'e2e/python/responses_tool_loop.py'), `${stack.url}/v1`, 'sk-e2e-python', MODEL],
      {
        timeout: 60_000,
      },
    );
    const summary = JSON.parse(stdout);
    expect(summary.sdk_version).toBe('3.22.1');
    const turns: any[] = summary.turns;
    expect(turns.map((t) => t.output.map((o: any) => o.type))).toEqual([
      ['function_call'],
      ['function_call'],
      ['message'],
    ]);
    for (const [i, t] of turns.entries()) {
      expect(t.previous_response_id).toBe(i === 0 ? null : turns[i - 1].id);
      expect(t.event_types[0]).toBe('response.created');
      expect(t.event_types[t.event_types.length - 1]).toBe('response.completed');
      const call = t.output[0];
      if (call.type === 'function_call') {
        expect(call.name).toBe('get_weather');
        expect(schemaProblems(weatherTool.parameters, JSON.parse(call.arguments))).toEqual([]);
      }
      // Chained through the response store: each turn's prompt holds the previous one's, and the
      // worker still has it (the same conversation on one worker).
      if (i > 0)
        expect(t.usage.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(turns[i - 1].usage.input_tokens);
    }
    expect(summary.retrieved).toEqual({ id: turns[2].id, status: 'completed', output: turns[2].output });

    const after = await MetricsScrape.of(stack);
    const delta = (labels: Record<string, string>) =>
      after.value('fastloop_edge_turns_total', labels) - before.value('fastloop_edge_turns_total', labels);
    expect(delta({ transport: 'sse', status: 'completed' })).toBe(3);
    expect(
      after.value('fastloop_edge_state_cache_lookups_total', { result: 'store' }) -
        before.value('fastloop_edge_state_cache_lookups_total', { result: 'store' }),
    ).toBe(2);
  }, 90_000);

  it('runs two lanes (stream_id) on one responses.connect socket, each event echoing its lane, and chains a lane', async () => {
    const { stdout } = await run(
      join(VENV, 'bin', 'python'),
      [join(ROOT, 'e2e/python/responses_lanes.py'), `${stack.url}/v1`, 'sk-e2e-python', MODEL],
      { timeout: 60_000 },
    );
    const { lanes } = JSON.parse(stdout);
    expect(lanes['py-a'].stream_ids).toEqual(['py-a']);
    expect(lanes['py-b'].stream_ids).toEqual(['py-b']);
    const [first, second] = lanes['py-a'].responses;
    expect(first).toMatchObject({ status: 'completed', output: ['function_call'] });
    expect(second).toMatchObject({ status: 'completed', previous_response_id: first.id });
    expect(lanes['py-b'].responses).toEqual([expect.objectContaining({ status: 'completed' })]);
  }, 90_000);
});
