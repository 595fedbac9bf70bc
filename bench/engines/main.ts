/**
 * bench/engines: per engine (sim; llamacpp on a GGUF, stories260K by default), time to first token
 * and decode rate of a WebSocket continuation vs a stateless resend of the same conversation as
 * its history grows to the model's context, plus a cold resend that reuses no prefix. Run it on an
 * otherwise idle machine: `npx tsx bench/engines/main.ts [--model <gguf>]`.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { modelStack, startStack, type Stack } from '@fastloop/launcher';
import { runConversation } from './conversation-modes';
import { MODES, renderMarkdown, type EngineTurn } from './engine-bench-report';

const ROOT = resolve(__dirname, '..', '..');

async function counter(stack: Stack, name: string): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${stack.services.inference.ports.admin}/metrics`)).text();
  const m = new RegExp(`^${name}\\{[^}]*\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

async function benchEngine(engine: 'sim' | 'llamacpp', modelPath: string): Promise<EngineTurn[]> {
  const served =
    engine === 'llamacpp'
      ? await modelStack(modelPath, mkdtempSync(join(tmpdir(), 'fastloop-bench-engines-')))
      : undefined;
  const stack = await startStack({
    port: 0,
    privateRedis: !process.env.REDIS_URL,
    logLevel: 'warn',
    env: {
      ...served?.env,
      FASTLOOP_API_KEYS: 'sk-bench',
      SIM_TOOL_CALLS: '0',
      SIM_TTFT_MS: '50',
      SIM_TOKENS_PER_SECOND: '1000',
    },
  });
  try {
    const model = served?.modelId ?? 'fastloop-sim';
    const maxInputTokens = engine === 'llamacpp' ? 512 : 4096;
    // Only engines with their own KV state report what they evaluated (the sim's counter stays 0).
    const evaluated =
      engine === 'llamacpp' ? () => counter(stack, 'inference_engine_evaluated_tokens_total') : async () => undefined;
    // The edge loads a file-based profile (GGUF vocabulary) on first use: keep that out of turn 1.
    await runConversation(stack, engine, 'resend-cold', {
      model,
      maxInputTokens,
      maxTurns: 1,
      maxOutputTokens: 16,
      evaluated,
    });
    const turns: EngineTurn[] = [];
    for (const mode of MODES) {
      turns.push(
        ...(await runConversation(stack, engine, mode, {
          model,
          maxInputTokens,
          maxTurns: 40,
          maxOutputTokens: 24,
          evaluated,
        })),
      );
    }
    return turns;
  } finally {
    await stack.stop();
  }
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--model');
  const modelPath = resolve(i >= 0 ? process.argv[i + 1] : join(ROOT, '..', 'shared', 'models', 'stories260K.gguf'));
  const turns = [...(await benchEngine('sim', modelPath)), ...(await benchEngine('llamacpp', modelPath))];
  const meta = {
    date: new Date().toISOString(),
    machine: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, llama.cpp one thread`,
  };
  const out = join(ROOT, 'bench', 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'engines.json'), JSON.stringify({ meta, model: modelPath, turns }, null, 2) + '\n');
  writeFileSync(join(out, 'engines.md'), renderMarkdown(turns, meta) + '\n');
  process.stdout.write(renderMarkdown(turns, meta) + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`bench/engines failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
