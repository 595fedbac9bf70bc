/**
 * safety's CPU per streamed output batch, in process: the Classify call the edge's output moderator
 * makes for each batch of model text (scan, release frontier, findings), on one session whose state
 * is held decoded between batches, as a ModerateStream session holds it. Text: the repository's
 * README (prose, tables, code) and an edge source file, in 70-character batches. No sockets and no
 * other process, so two builds compare on a loaded machine where the relay benchmark cannot tell
 * them apart: run each build a few times, alternating.
 *
 *   npx tsx bench/micro/output-batch.bench.ts [--batches N] [--sessions N] [--chars N]   (default 200 × 8 × 70)
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { safetyV1 } from '@fastloop/proto';
// eslint-disable-next-line @nx/enforce-module-boundaries -- measures safety's internals in process; an app has no public entry
import type { HeldState } from '../../apps/safety/src/classifier';
// eslint-disable-next-line @nx/enforce-module-boundaries -- measures safety's internals in process; an app has no public entry
import { testClassifier } from '../../apps/safety/src/testing/test-classifier';

const REPO = resolve(__dirname, '..', '..');
const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const BATCHES = arg('batches', 200);
const SESSIONS = arg('sessions', 8);
const CHARS = arg('chars', 70);

const classifier = testClassifier();
const text =
  readFileSync(join(REPO, 'README.md'), 'utf8').slice(0, 60_000) +
  readFileSync(join(REPO, 'apps/edge/src/turn/render-stage.ts'), 'utf8');
const out = (t: string): safetyV1.SafetyItem => ({
  itemType: 'output_text',
  role: 'assistant',
  text: t,
  source: safetyV1.ItemSource.ITEM_SOURCE_MODEL,
});

/** One response's batches from `from` on; CPU µs per batch. */
async function session(from: number): Promise<number> {
  let kept: HeldState['previous'];
  let heldChars: number | undefined;
  const started = process.cpuUsage();
  for (let i = 0; i < BATCHES; i++) {
    const at = (from + i * CHARS) % (text.length - CHARS);
    const output = { final: i === BATCHES - 1, ...(heldChars !== undefined ? { heldBefore: heldChars } : {}) };
    const res = await classifier.classifyAsync(
      { state: Buffer.alloc(0), items: [out(text.slice(at, at + CHARS))], tenant: 't', output },
      { held: { previous: kept, keep: output.final ? undefined : (next) => (kept = next) } },
    );
    heldChars = res.heldChars;
  }
  const cpu = process.cpuUsage(started);
  return (cpu.user + cpu.system) / BATCHES;
}

async function main(): Promise<void> {
  for (let w = 0; w < 3; w++) await session(w * 1_000); // warm the JIT and the automata
  const per: number[] = [];
  for (let s = 0; s < SESSIONS; s++) per.push(await session((s * 97 * CHARS) % 50_000));
  per.sort((a, b) => a - b);
  const median = per[Math.floor(per.length / 2)];
  process.stdout.write(
    `safety CPU per ${CHARS}-character output batch (in process, held session): median ${median.toFixed(1)} µs over ${SESSIONS} sessions × ${BATCHES} batches (min ${per[0].toFixed(1)}, max ${per[per.length - 1].toFixed(1)})\n`,
  );
}

void main();
