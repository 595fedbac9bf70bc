/**
 * safety's CPU per input Classify call of an agent turn, in process: the call the edge makes for a
 * continuation's new items (the model's tool call and the tool's 2–6 KB output, this repository's
 * source), on the state the previous answer carried, as the edge carries it (decoded and encoded
 * each call). Its round trip is what a turn's first output waits for when the verdict comes after
 * the engine's first token (bench/agent-loop/instant.ts). No sockets and no other process, so two
 * builds compare on a loaded machine: run each build a few times, alternating.
 *
 *   npx tsx bench/micro/input-classify.bench.ts [--turns N] [--conversations N]   (default 40 × 8)
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { safetyV1 } from '@fastloop/proto';
// eslint-disable-next-line @nx/enforce-module-boundaries -- measures safety's internals in process; an app has no public entry
import { testClassifier } from '../../apps/safety/src/testing/test-classifier';

const REPO = resolve(__dirname, '..', '..');
const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const TURNS = arg('turns', 40);
const CONVERSATIONS = arg('conversations', 8);

const classifier = testClassifier();
const SOURCES = [
  'apps/edge/src/turn/render-stage.ts',
  'apps/edge/src/turn/generate-stage.ts',
  'apps/safety/src/classifier.ts',
  'libs/service-kit/src/mux/mux-client.ts',
].map((p) => readFileSync(join(REPO, p), 'utf8'));

/** Turn `t`'s tool output: 2–6 KB of source, a different slice each turn. */
function toolOutput(conversation: number, t: number): string {
  const text = SOURCES[(conversation + t) % SOURCES.length];
  const length = 2_000 + ((t * 1_237 + conversation * 311) % 4_000);
  const from = (t * 421) % Math.max(1, text.length - length);
  return text.slice(from, from + length);
}

/** One conversation's input calls; CPU µs per call and the characters classified. */
async function conversation(c: number): Promise<{ us: number; chars: number }> {
  let state: Buffer = Buffer.alloc(0);
  let chars = 0;
  let cpu = 0;
  for (let t = 0; t < TURNS; t++) {
    const items: safetyV1.SafetyItem[] = [
      {
        itemType: 'function_call',
        role: '',
        text: `functions.read_file {"path":"src/f${t}.ts"}`,
        source: safetyV1.ItemSource.ITEM_SOURCE_MODEL,
      },
      {
        itemType: 'function_call_output',
        role: '',
        text: toolOutput(c, t),
        source: safetyV1.ItemSource.ITEM_SOURCE_TOOL,
      },
    ];
    for (const item of items) chars += item.text.length;
    const started = process.cpuUsage();
    const res = await classifier.classifyAsync({ state, items, tenant: `t${c}` });
    const used = process.cpuUsage(started);
    cpu += used.user + used.system;
    state = res.state;
  }
  return { us: cpu / TURNS, chars: chars / TURNS };
}

async function main(): Promise<void> {
  for (let w = 0; w < 3; w++) await conversation(100 + w); // warm the JIT
  const per: number[] = [];
  let chars = 0;
  for (let c = 0; c < CONVERSATIONS; c++) {
    const r = await conversation(c);
    per.push(r.us);
    chars += r.chars / CONVERSATIONS;
  }
  const mean = per.reduce((a, b) => a + b, 0) / per.length;
  per.sort((a, b) => a - b);
  process.stdout.write(
    `safety CPU per input Classify call (in process, ${(chars / 1000).toFixed(1)} KB of new items on average, state carried): mean ${mean.toFixed(0)} µs over ${CONVERSATIONS} conversations × ${TURNS} turns (per conversation: min ${per[0].toFixed(0)}, max ${per[per.length - 1].toFixed(0)})\n`,
  );
}

void main();
