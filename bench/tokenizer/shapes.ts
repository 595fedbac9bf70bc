// Tokenizer cost per input shape (issue 17, "CPU: no request stalls the edge"): ms per MB of the
// o200k encoder the edge runs on untrusted text, for every shape a hostile request can take (runs
// of one character, periodic text, long words, CJK, emoji, random code units) beside ordinary
// prose and source code. With `--baseline <dir>` (a checkout of an older libs/model-profiles, e.g.
// `git archive <commit> libs/model-profiles | tar -x -C <dir>`), each shape is encoded by both
// encoders, alternating, so the before/after ratio comes from one run on one (noisy) machine.
// Run: npx tsx bench/tokenizer/shapes.ts [--baseline <dir>] [--repeats N] [--quick]
//   (writes bench/results/tokenizer-shapes.{json,md}; --quick writes under bench/results/quick/)
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

type Encode = (text: string, maxTokens?: number, deadline?: number) => number[];

const ROOT = resolve(__dirname, '../..');
const ENCODER = 'libs/model-profiles/src/lib/harmony/fast-o200k-encoder.ts';
const MB = 1 << 20;

/** A deterministic generator, so every run and both encoders see the same text. */
function lcg(seed: number): () => number {
  let x = seed;
  return () => (x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff);
}

function drawn(units: number, alphabet: readonly string[], seed = 7): string {
  const next = lcg(seed);
  const parts: string[] = [];
  for (let i = 0; i < units; i++) parts.push(alphabet[next() % alphabet.length]);
  return parts.join('');
}

const letters = [...'abcdefghijklmnopqrstuvwxyz'];
const cjk = Array.from({ length: 20_000 }, (_, i) => String.fromCharCode(0x4e00 + i));
const emoji = Array.from({ length: 80 }, (_, i) => String.fromCodePoint(0x1f600 + i));
const units = Array.from({ length: 0x10000 }, (_, i) => String.fromCharCode(i));

function sourceCode(bytes: number): string {
  const files = readdirSync(join(ROOT, 'apps'), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts'))
    .sort()
    .map((path) => readFileSync(join(ROOT, 'apps', path), 'utf8'));
  let text = '';
  for (let i = 0; text.length < bytes; i++) text += files[i % files.length];
  return text.slice(0, bytes);
}

function prose(bytes: number, seed: number): string {
  const words = 'the quick brown fox jumps over a lazy dog while we return values from functions'.split(' ');
  const next = lcg(11);
  const parts: string[] = [];
  for (let length = 0; length < bytes;) {
    const word = words[next() % words.length] + (next() % 12 === 0 ? '.\n' : ' ');
    parts.push(word);
    length += word.length;
  }
  return parts.join('');
}

/**
 * Each shape at its size (the issue's two headline inputs at theirs). Random shapes differ per
 * `seed` (each repeat gets its own): gpt-tokenizer caches merged pieces, and the same 1 MB of CJK
 * again was served from that cache (34 instead of ~800 ms per MB), which no attacker has to allow.
 */
const SHAPES: { name: string; make: (size: number, seed: number) => string }[] = [
  { name: 'prose (reference)', make: (size, seed) => prose(size, seed) },
  { name: 'source code (reference)', make: (size) => sourceCode(size) },
  { name: '4 MB of spaces', make: (size) => ' '.repeat(4 * size) },
  { name: '8 MB of `=`', make: (size) => '='.repeat(8 * size) },
  { name: 'run of `a`', make: (size) => 'a'.repeat(size) },
  { name: '`=-` repeated', make: (size) => '=-'.repeat(size / 2) },
  { name: '`abc` repeated', make: (size) => 'abc'.repeat(size / 3) },
  { name: 'long word (random letters)', make: (size, seed) => drawn(size, letters, seed) },
  { name: 'CJK, no spaces', make: (size, seed) => drawn(size / 3, cjk, seed) },
  { name: 'one CJK character repeated', make: (size) => '日'.repeat(size / 3) },
  { name: 'emoji, no spaces', make: (size, seed) => drawn(size / 4, emoji, seed) },
  { name: 'random UTF-16 code units', make: (size, seed) => drawn(size / 2, units, seed) },
];

interface Row {
  shape: string;
  bytes: number;
  tokens: number;
  afterMsPerMb: number;
  beforeMsPerMb?: number;
  beforeTokens?: number;
}

function timeOnce(encode: Encode, text: string): { ms: number; tokens: number } {
  const start = performance.now();
  const tokens = encode(text).length;
  return { ms: performance.now() - start, tokens };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const repeats = Number(argValue('--repeats') ?? (quick ? 1 : 5));
  const baselineDir = argValue('--baseline');
  const after = ((await import(join(ROOT, ENCODER))) as { fastEncodeO200k: Encode }).fastEncodeO200k;
  const before = baselineDir
    ? ((await import(resolve(baselineDir, ENCODER))) as { fastEncodeO200k: Encode }).fastEncodeO200k
    : undefined;
  // Build the vocabulary tables of both before timing anything.
  for (const encode of [after, before]) encode?.('warm-up: zyxwvutsrqp — ünïcödé 日本語 🦀 <|end|>');
  const rows: Row[] = [];
  const size = Math.round(MB * (quick ? 0.25 : 1));
  for (const { name, make } of SHAPES) {
    const afterMs: number[] = [];
    const beforeMs: number[] = [];
    let tokens = 0;
    let bytes = 0;
    let beforeTokens: number | undefined;
    for (let r = 0; r < repeats; r++) {
      const text = make(size, 7 + r);
      bytes = Buffer.byteLength(text);
      // Alternate which encoder goes first, so neither always runs on a warmer cache.
      const order = r % 2 === 0 ? (['after', 'before'] as const) : (['before', 'after'] as const);
      for (const which of order) {
        if (which === 'before' && before === undefined) continue;
        const timed = timeOnce(which === 'after' ? after : (before as Encode), text);
        if (which === 'after') [tokens, afterMs[afterMs.length]] = [timed.tokens, timed.ms];
        else [beforeTokens, beforeMs[beforeMs.length]] = [timed.tokens, timed.ms];
      }
    }
    const row: Row = { shape: name, bytes, tokens, afterMsPerMb: median(afterMs) / (bytes / MB) };
    if (before) Object.assign(row, { beforeMsPerMb: median(beforeMs) / (bytes / MB), beforeTokens });
    rows.push(row);
    process.stdout.write(`${JSON.stringify(row)}\n`);
  }
  write(rows, { quick, repeats, baseline: baselineDir !== undefined });
}

function write(rows: Row[], run: { quick: boolean; repeats: number; baseline: boolean }): void {
  const dir = join(ROOT, 'bench/results', run.quick ? 'quick' : '');
  mkdirSync(dir, { recursive: true });
  const date = new Date().toISOString().slice(0, 10);
  writeFileSync(join(dir, 'tokenizer-shapes.json'), `${JSON.stringify({ date, ...run, rows }, null, 2)}\n`);
  const fmt = (n: number | undefined): string => (n === undefined ? '–' : n < 10 ? n.toFixed(2) : n.toFixed(0));
  const lines = [
    '# Tokenizer cost per input shape',
    '',
    `Run ${date}, median of ${run.repeats} encodes per shape, one thread, \`npx tsx bench/tokenizer/shapes.ts${run.baseline ? ' --baseline <before>' : ''}\`.`,
    'ms per MB of UTF-8 input (the two headline inputs are timed at 4 and 8 MB, the rest at 1 MB).',
    run.baseline
      ? '"before" is the encoder of the baseline checkout, timed in the same run, alternating with "after".'
      : '',
    '',
    '| shape | bytes | tokens | before (ms/MB) | after (ms/MB) | before / after |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.shape} | ${r.bytes} | ${r.tokens}${r.beforeTokens !== undefined && r.beforeTokens !== r.tokens ? ` (before: ${r.beforeTokens})` : ''} | ${fmt(r.beforeMsPerMb)} | ${fmt(r.afterMsPerMb)} | ${r.beforeMsPerMb === undefined ? '–' : `${(r.beforeMsPerMb / r.afterMsPerMb).toFixed(1)}×`} |`,
    ),
    '',
    rows.some((r) => r.beforeTokens !== undefined && r.beforeTokens !== r.tokens)
      ? 'Token counts differ where "before" merged long pieces in chunks (4,096 ASCII / 256 other units) and "after" merges them exactly (runs of one unit at any length, other pieces up to 4,096 units): after equals gpt-tokenizer there.'
      : 'Both gave the same tokens for every shape here; "after" is exact (equal to gpt-tokenizer) for runs of one unit at any length and for other pieces up to 4,096 units (before: 4,096 ASCII, 256 other).',
    '',
  ];
  writeFileSync(join(dir, 'tokenizer-shapes.md'), lines.join('\n'));
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

void main();
