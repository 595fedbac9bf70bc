/**
 * bench/engines/tool-call-turns: an agent loop of forced tool calls on the llamacpp engine, and
 * per turn what the worker re-evaluated of what it had already seen. A tool-call turn's new
 * tokens are the tool's output and the generation prompt; anything the engine evaluates beyond
 * them is history it held but could not reuse (the sampled call, re-rendered differently). Writes
 * bench/results/tool-call-turns.{md,json} (or `--out`).
 *
 *   npx tsx bench/engines/tool-call-turns.ts [--model <gguf>] [--turns 8] [--context 2048] [--label after]
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { modelStack, startStack, type Stack } from '@fastloop/launcher';
import { ggufProfileId, resolveProfile } from '@fastloop/model-profiles';
import { ResponsesSocket } from './conversation-modes';
import { spread } from './engine-bench-report';

const ROOT = resolve(__dirname, '..', '..');

const forecastTool = {
  type: 'function',
  name: 'get_weather',
  strict: true,
  parameters: {
    type: 'object',
    properties: { city: { type: 'string', maxLength: 24 }, days: { type: 'integer', minimum: 1, maximum: 14 } },
    required: ['city', 'days'],
    additionalProperties: false,
  },
};

/** One tool-call turn as the worker saw it. */
export interface ToolTurn {
  turn: number;
  inputTokens: number;
  cachedTokens: number;
  evaluatedTokens: number;
  alignedTokens: number;
  /** Tokens the turn added: the tool output's entry and the generation prompt (turn 1: all of it). */
  newTokens: number;
  ttftMs: number;
  arguments: string;
}

async function counter(stack: Stack, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${stack.services.inference.ports.admin}/metrics`)).text();
  const m = new RegExp(`^${name}\\{[^}]*\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

async function main(): Promise<void> {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const modelPath = resolve(arg('--model') ?? join(ROOT, '..', 'shared', 'models', 'stories260K.gguf'));
  const turns = Number(arg('--turns') ?? 8);
  const contextSize = Number(arg('--context') ?? 2048);
  const label = arg('--label') ?? 'now';
  const out = resolve(arg('--out') ?? join(ROOT, 'bench', 'results'));
  const served = await modelStack(modelPath, mkdtempSync(join(tmpdir(), 'fastloop-bench-tools-')), { contextSize });
  const profile = await resolveProfile(ggufProfileId(modelPath));
  const load = { start: loadavg()[0], end: 0 };
  const stack = await startStack({
    port: 0,
    privateRedis: !process.env.REDIS_URL,
    logLevel: 'warn',
    env: { ...served.env, FASTLOOP_API_KEYS: 'sk-bench', EDGE_OUTPUT_MODERATION: 'false' },
  });
  const results: ToolTurn[] = [];
  try {
    const socket = await ResponsesSocket.open(stack);
    const body = {
      model: served.modelId,
      tools: [forecastTool],
      tool_choice: 'required',
      temperature: 0,
      max_output_tokens: 200,
    };
    let previous: string | undefined;
    let input: unknown[] = [{ role: 'user', content: 'Weather in Oslo for the week?' }];
    let lastNew = 0;
    for (let turn = 1; turn <= turns; turn++) {
      const before = {
        evaluated: await counter(stack, 'inference_engine_evaluated_tokens_total'),
        aligned: await counter(stack, 'inference_engine_aligned_tokens_total'),
      };
      const r = await socket.send({ ...body, input, ...(previous ? { previous_response_id: previous } : {}) });
      const evaluated = (await counter(stack, 'inference_engine_evaluated_tokens_total')) - before.evaluated;
      const aligned = (await counter(stack, 'inference_engine_aligned_tokens_total')) - before.aligned;
      const call = r.output.find((o) => o.type === 'function_call');
      if (!call) throw new Error(`turn ${turn}: no call in ${JSON.stringify(r.output).slice(0, 200)}`);
      const output = `It is ${10 + turn} C and dry in ${JSON.parse(call.arguments).city}.`;
      results.push({
        turn,
        inputTokens: r.inputTokens,
        cachedTokens: r.cachedTokens,
        evaluatedTokens: evaluated,
        alignedTokens: aligned,
        newTokens: turn === 1 ? r.inputTokens : lastNew,
        ttftMs: r.ttftMs,
        arguments: call.arguments,
      });
      process.stderr.write(`turn ${turn}: ${JSON.stringify(results[results.length - 1])}\n`);
      lastNew =
        profile.renderEntry({ kind: 'function_call_output', name: 'get_weather', output, callId: call.call_id })
          .length + profile.renderGenerationPrompt().length;
      previous = r.responseId;
      input = [{ type: 'function_call_output', call_id: call.call_id, output }];
      if (r.inputTokens + 2 * 200 > contextSize) break;
    }
    socket.close();
  } finally {
    load.end = loadavg()[0];
    await stack.stop();
  }
  const later = results.filter((t) => t.turn > 1);
  const reevaluated = spread(later.map((t) => t.evaluatedTokens - t.newTokens));
  const md = [
    `# bench/engines/tool-call-turns (${label})`,
    '',
    `${new Date().toISOString()}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}; stories260K on llamacpp (one thread, LLAMACPP_CONTEXT_SIZE=${contextSize}); 1-minute load average ${load.start.toFixed(2)} at start, ${load.end.toFixed(2)} at end. A WebSocket agent loop: every turn a forced call (strict schema, greedy), then its output. "new" = the tool output's entry + the generation prompt as the model's template renders them; "re-evaluated" = what the engine's meter counted beyond that.`,
    '',
    `Re-evaluated per tool-call turn (turns 2–${results.length}): median ${reevaluated?.median ?? '–'} tokens (${reevaluated?.min ?? '–'}–${reevaluated?.max ?? '–'}).`,
    '',
    '| turn | input | cached | evaluated | new | re-evaluated | aligned after | TTFT ms | arguments |',
    '|---|---|---|---|---|---|---|---|---|',
    ...results.map(
      (t) =>
        `| ${t.turn} | ${t.inputTokens} | ${t.cachedTokens} | ${t.evaluatedTokens} | ${t.newTokens} | ${t.turn === 1 ? '–' : t.evaluatedTokens - t.newTokens} | ${t.alignedTokens} | ${t.ttftMs.toFixed(1)} | \`${t.arguments}\` |`,
    ),
    '',
  ].join('\n');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `tool-call-turns-${label}.json`), JSON.stringify({ label, load, results }, null, 2) + '\n');
  writeFileSync(join(out, `tool-call-turns-${label}.md`), md);
  process.stdout.write(md);
}

main().catch((err: unknown) => {
  process.stderr.write(`tool-call-turns failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
