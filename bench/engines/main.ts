/**
 * bench/engines: per engine (sim; llamacpp on a GGUF, stories260K by default), time to first token
 * and decode rate of a WebSocket continuation, a stateless resend of the same conversation, a cold
 * resend that reuses no prefix, and — for llamacpp — the same model driven directly with
 * node-llama-cpp in this process, as the history grows. Each mode is repeated (`--reps`, 5), the
 * modes take turns within a repetition, all go over WebSocket, sampling is greedy. Run it on an
 * otherwise idle machine:
 *
 *   npx tsx bench/engines/main.ts [--model <gguf>] [--reps 5] [--context 2048] [--quick] [--out <dir>]
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { modelStack, startStack, type Stack } from '@fastloop/launcher';
import { ggufProfileId, resolveProfile } from '@fastloop/model-profiles';
import { FastloopConversation, USER_TURNS, type TurnSettings } from './conversation-modes';
import { DirectLlama, type DirectConversation } from './direct-llama';
import { MODES, modeOrder, renderMarkdown, type EngineTurn, type Mode, type RunMeta } from './engine-bench-report';

const ROOT = resolve(__dirname, '..', '..');

/**
 * Each mode's conversation is its own story: greedy sampling would otherwise make them identical,
 * and the worker, which matches prefixes by content across sessions, would hand whichever mode
 * runs second a turn the first one just prefilled (and a repetition the one before it). `ws` and
 * `direct` share one (they run on different KV caches); the others differ from it in the header's
 * first word, so their prompts stay the same size.
 */
function instructionsFor(mode: Mode, rep: number): string {
  const tag = { ws: 'A', direct: 'A', resend: 'B', 'resend-cold': 'C' }[mode];
  return `Story ${tag}${rep}.`;
}

interface Options {
  modelPath: string;
  reps: number;
  contextSize: number;
  maxTurns: number;
  out: string;
}

function parseArgs(argv: readonly string[]): Options {
  const arg = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const quick = argv.includes('--quick');
  return {
    modelPath: resolve(arg('--model') ?? join(ROOT, '..', 'shared', 'models', 'stories260K.gguf')),
    reps: Number(arg('--reps') ?? (quick ? 2 : 5)),
    contextSize: Number(arg('--context') ?? 2048),
    maxTurns: quick ? 4 : 40,
    out: resolve(arg('--out') ?? join(ROOT, 'bench', 'results')),
  };
}

async function counter(stack: Stack, name: string): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${stack.services.inference.ports.admin}/metrics`)).text();
  const m = new RegExp(`^${name}\\{[^}]*\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Runs one repetition: one conversation per mode, advanced a turn at a time, modes rotated. */
async function repetition(
  engine: string,
  rep: number,
  open: (
    mode: Mode,
  ) => Promise<(text: string, nonce: string) => Promise<Omit<EngineTurn, 'engine' | 'mode' | 'rep' | 'turn'>>>,
  modes: readonly Mode[],
  opts: { maxTurns: number; maxInputTokens: number },
): Promise<EngineTurn[]> {
  const turns: EngineTurn[] = [];
  const runners = new Map<Mode, Awaited<ReturnType<typeof open>>>();
  for (const mode of modes) runners.set(mode, await open(mode));
  for (let turn = 1; turn <= opts.maxTurns; turn++) {
    const text = USER_TURNS[(turn - 1) % USER_TURNS.length];
    const nonce = `${rep}-${turn}-${Math.random().toString(36).slice(2, 8)}`;
    let longest = 0;
    for (const mode of modeOrder(modes, rep, turn)) {
      const r = await runners.get(mode)!(text, nonce);
      turns.push({ engine, mode, rep, turn, ...r });
      longest = Math.max(longest, r.inputTokens + r.outputTokens);
    }
    process.stderr.write(`${engine} rep ${rep} turn ${turn}: ${longest} tokens\n`);
    // The next turn adds a user message and an answer: stop while both still fit.
    if (longest + 2 * 40 > opts.maxInputTokens) break;
  }
  return turns;
}

async function benchEngine(engine: 'sim' | 'llamacpp', options: Options, meta: RunMeta): Promise<EngineTurn[]> {
  const served =
    engine === 'llamacpp'
      ? await modelStack(options.modelPath, mkdtempSync(join(tmpdir(), 'fastloop-bench-engines-')), {
          contextSize: options.contextSize,
        })
      : undefined;
  const load = { start: loadavg()[0], end: 0 };
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
      // Output moderation holds the first ~255 characters back until its verdict, more than these
      // 24-token answers: with it TTFT would be the whole answer's time. Its cost is measured in
      // the instant-engine and load benchmarks; here the engine's own streaming shows.
      EDGE_OUTPUT_MODERATION: 'false',
    },
  });
  const direct = served ? await DirectLlama.open(options.modelPath, options.contextSize) : undefined;
  const profile = served ? await resolveProfile(ggufProfileId(options.modelPath)) : undefined;
  try {
    const model = served?.modelId ?? 'fastloop-sim';
    const settings = (mode: Mode, rep: number): TurnSettings => ({
      model,
      instructions: instructionsFor(mode, rep),
      maxOutputTokens: 24,
    });
    const modes = served ? MODES : MODES.filter((m) => m !== 'direct');
    const metered = async () =>
      served
        ? {
            evaluated: await counter(stack, 'inference_engine_evaluated_tokens_total'),
            aligned: await counter(stack, 'inference_engine_aligned_tokens_total'),
          }
        : undefined;
    const turns: EngineTurn[] = [];
    for (let rep = 0; rep <= options.reps; rep++) {
      // Repetition 0 warms everything (sockets, code paths, the worker's sequences) and is dropped.
      const conversations: Array<FastloopConversation | DirectConversation> = [];
      const open = async (mode: Mode) => {
        if (mode === 'direct') {
          const c = direct!.conversation(profile!, { instructions: instructionsFor(mode, rep), tools: [] }, 24);
          conversations.push(c);
          return async (text: string) => {
            const r = await c.turn(text);
            return {
              inputTokens: r.promptTokens,
              cachedTokens: r.promptTokens - r.evaluatedTokens,
              evaluatedTokens: r.evaluatedTokens,
              outputTokens: r.outputTokens,
              ttftMs: r.ttftMs,
              tokensPerSecond: r.tokensPerSecond,
            };
          };
        }
        const c = await FastloopConversation.open(stack, mode, settings(mode, rep));
        conversations.push(c);
        return async (text: string, nonce: string) => {
          const before = await metered();
          const r = await c.turn(text, nonce);
          const after = await metered();
          return {
            inputTokens: r.inputTokens,
            cachedTokens: r.cachedTokens,
            evaluatedTokens: after && before ? after.evaluated! - before.evaluated! : undefined,
            alignedTokens: after && before ? after.aligned! - before.aligned! : undefined,
            outputTokens: r.outputTokens,
            ttftMs: r.ttftMs,
            tokensPerSecond: r.tokensPerSecond,
            ...r.timing,
          };
        };
      };
      const maxTurns = rep === 0 ? 2 : options.maxTurns;
      const maxInputTokens = served ? options.contextSize : 4096;
      const measured = await repetition(engine, rep, open, modes, { maxTurns, maxInputTokens });
      if (rep > 0) turns.push(...measured);
      for (const c of conversations) if (c instanceof FastloopConversation) c.close();
    }
    return turns;
  } finally {
    load.end = loadavg()[0];
    meta.load[engine] = load;
    await direct?.close();
    await stack.stop();
  }
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const meta: RunMeta = {
    date: new Date().toISOString(),
    machine: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, llama.cpp one thread (worker and direct alike), stories260K with LLAMACPP_CONTEXT_SIZE=${options.contextSize}`,
    reps: options.reps,
    load: {},
    notes: [
      'stories260K was trained on 512 tokens; beyond that its answers are poor but its compute is real, which is what is timed here.',
    ],
  };
  const turns = [...(await benchEngine('sim', options, meta)), ...(await benchEngine('llamacpp', options, meta))];
  mkdirSync(options.out, { recursive: true });
  const md = renderMarkdown(turns, meta);
  writeFileSync(
    join(options.out, 'engines.json'),
    JSON.stringify({ meta, model: options.modelPath, turns }, null, 2) + '\n',
  );
  writeFileSync(join(options.out, 'engines.md'), md + '\n');
  process.stdout.write(md + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`bench/engines failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
