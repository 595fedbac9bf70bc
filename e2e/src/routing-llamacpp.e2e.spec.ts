/**
 * Real engines through the router: three llama.cpp workers on stories260K behind one router. A
 * conversation stays on its worker, whose engine really skips what it holds (`cached_tokens` is the
 * prompt minus what llama.cpp evaluated), and when that worker is killed the conversation goes on
 * elsewhere: the turn is re-sent before its first token and the new worker prefills the history.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { modelStack, type Stack } from '@fastloop/launcher';
import { useStack, WsConversation } from './clients';
import { MetricsScrape } from './metrics';
import { startTestStack } from './stack-fixture';

const MODEL = resolve(__dirname, '../../../shared/models/stories260K.gguf');
const describeModel = existsSync(MODEL) ? describe : describe.skip;
if (!existsSync(MODEL)) process.stderr.write(`skipping llamacpp routing e2e: ${MODEL} is absent\n`);

let stack: Stack;
let modelId = '';

/** A worker's counters: requests and prompt tokens its engine evaluated (NaN once it is gone). */
async function workerCounters(id: string): Promise<{ requests: number; evaluated: number }> {
  const w = stack.workers.find((x) => x.id === id)!;
  try {
    const text = await (await fetch(`http://127.0.0.1:${w.ports.admin}/metrics`)).text();
    const sum = (name: string) => {
      let s = 0;
      for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)$`, 'gm'))) s += Number(m[1]);
      return s;
    };
    return { requests: sum('inference_requests_total'), evaluated: sum('inference_engine_evaluated_tokens_total') };
  } catch {
    return { requests: NaN, evaluated: NaN };
  }
}

async function snapshot(): Promise<Map<string, { requests: number; evaluated: number }>> {
  const out = new Map<string, { requests: number; evaluated: number }>();
  for (const w of stack.workers) out.set(w.id, await workerCounters(w.id));
  return out;
}

/** The one worker whose request count grew, and how many prompt tokens its engine evaluated meanwhile. */
function servedBy(
  before: Map<string, { requests: number; evaluated: number }>,
  after: Map<string, { requests: number; evaluated: number }>,
): { id: string; evaluated: number } {
  const grown = [...after].filter(([id, c]) => c.requests > before.get(id)!.requests);
  expect(grown).toHaveLength(1);
  const [id, c] = grown[0];
  return { id, evaluated: c.evaluated - before.get(id)!.evaluated };
}

const terminal = (events: { type: string; [k: string]: any }[]) => {
  const last = events[events.length - 1];
  if (last.type !== 'response.completed' && last.type !== 'response.incomplete')
    throw new Error(`turn ended with ${JSON.stringify(last).slice(0, 300)}`);
  return last.response;
};

describeModel('llama.cpp workers behind the router (stories260K)', () => {
  beforeAll(async () => {
    const served = await modelStack(MODEL, mkdtempSync(join(tmpdir(), 'fastloop-llamacpp-routing-')));
    modelId = served.modelId;
    stack = await startTestStack({
      ...served.env,
      FASTLOOP_WORKERS: '3',
      LLAMACPP_SEQUENCES: '2',
      EDGE_OUTPUT_MODERATION: 'false',
      // Continuations keep their worker until it fails, so the kill below is met by the edge's retry.
      ROUTER_REUSE_MS: '600000',
    });
    useStack(stack);
  }, 300_000);
  afterAll(async () => {
    useStack(undefined);
    if (stack) process.stderr.write(`e2e stack logs: ${stack.logDir}\n`);
    await stack?.stop();
  }, 60_000);

  it('keeps a conversation on its worker, reports what the engine skipped, and goes on elsewhere when it dies', async () => {
    const ws = new WsConversation();
    try {
      const turn = async (input: string, previous?: string) => {
        const before = await snapshot();
        const response = terminal(
          await ws.create({
            model: modelId,
            input,
            previous_response_id: previous,
            max_output_tokens: 16,
            store: false,
          }),
        );
        const served = servedBy(before, await snapshot());
        const usage = response.usage;
        // What the client is told was cached is exactly what llama.cpp did not evaluate.
        expect(usage.input_tokens - usage.input_tokens_details.cached_tokens).toBe(served.evaluated);
        return { response, usage, worker: served.id };
      };
      const t1 = await turn('Once upon a time there was a cat.');
      const t2 = await turn('The cat saw a dog.', t1.response.id);
      const t3 = await turn('They played all day.', t2.response.id);
      expect(new Set([t1.worker, t2.worker, t3.worker]).size).toBe(1);
      expect(t2.usage.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(t1.usage.input_tokens);
      expect(t3.usage.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(t2.usage.input_tokens);

      const retries = (await MetricsScrape.of(stack)).value('fastloop_edge_worker_retries_total');
      await stack.workers.find((w) => w.id === t3.worker)!.stop('SIGKILL');
      const t4 = await turn('Then the sun went down.', t3.response.id);
      expect(t4.worker).not.toBe(t3.worker);
      expect((await MetricsScrape.of(stack)).value('fastloop_edge_worker_retries_total')).toBe(retries + 1);
      // The new worker held nothing of it: the history was prefilled again.
      expect(t4.usage.input_tokens_details.cached_tokens).toBeLessThan(t3.usage.input_tokens);
      const t5 = await turn('The end.', t4.response.id);
      expect(t5.worker).toBe(t4.worker);
      expect(t5.usage.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(t4.usage.input_tokens);
    } finally {
      ws.close();
    }
  }, 240_000);
});
