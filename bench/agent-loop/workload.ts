import { AGENT_TOOLS, type FunctionTool } from './agent-tools';
import { buildInstructions } from './instructions';
import { createRandom, hashString, pickIndex, pickInt } from '@fastloop/service-kit';
import type { CorpusFile } from './source-corpus';

/** The model every request names: the simulated accelerator behind the router. */
export const SIM_MODEL = 'fastloop-sim';

/** Options of {@link createWorkload}. */
export interface WorkloadOptions {
  /** Same seed and corpus, same workload. */
  seed: number;
  /** Size range of one tool output, in characters (the corpus is ASCII source, so ≈ bytes). */
  outputBytes: readonly [number, number];
  /** Source files the tool outputs are cut from (see loadCorpus). */
  corpus: readonly CorpusFile[];
  /**
   * Makes this rollout's prompt its own (default: none): a 9-digit number written at the start of
   * the instructions and of every tool output, so no cache (the worker's content prefix cache, the
   * edge's rendered-entry cache) can serve one mode or repetition with another's work. Nine digits
   * are always three o200k tokens, so every nonce gives the same prompt sizes (workload.spec.ts).
   */
  nonce?: number;
}

/** Everything a rollout sends, deterministic in its options. */
export interface Workload {
  readonly model: string;
  readonly instructions: string;
  readonly tools: readonly FunctionTool[];
  /** The user's request that starts the rollout. */
  readonly userPrompt: string;
  /** What the client answers to the tool call of `turn` (1-based): 2–8 KB of real source. */
  toolOutput(turn: number, toolName: string): string;
}

const TASKS = [
  'The WebSocket e2e suite times out after the last change to the connection cache. Find the cause, fix it, and make sure every test passes.',
  'Add a per-tenant rate limit to the edge, configurable through the environment, with tests and a metric for rejected requests.',
  'The billing worker double-counts usage when Redis reconnects during a flush. Reproduce it in a test, fix it, and explain the root cause.',
  'Refactor the harmony renderer so that tool schemas are rendered once per conversation, keeping the output byte-identical, and prove it with a property test.',
];

/** Builds the workload for `options.seed`. */
export function createWorkload(options: WorkloadOptions): Workload {
  const { seed, corpus, outputBytes } = options;
  if (corpus.length === 0) throw new Error('createWorkload: the corpus is empty');
  const userPrompt = TASKS[seed % TASKS.length];
  const nonce = options.nonce === undefined ? undefined : checkNonce(options.nonce);
  const instructions = buildInstructions(seed);
  return {
    model: SIM_MODEL,
    instructions: nonce === undefined ? instructions : `Workspace session ${nonce}.\n\n${instructions}`,
    tools: AGENT_TOOLS,
    userPrompt,
    toolOutput: (turn, toolName) => {
      const out = toolOutput(corpus, hashString(`turn-${turn}`, seed >>> 0), outputBytes, toolName);
      return nonce === undefined ? out : `[session ${nonce}]\n${out}`;
    },
  };
}

/** A nonce for `key` (e.g. mode, repetition and TPS) under `seed`: deterministic, 9 digits. */
export function rolloutNonce(seed: number, key: string): number {
  return 100_000_000 + (hashString(key, seed >>> 0) % 900_000_000);
}

function checkNonce(nonce: number): number {
  if (!Number.isInteger(nonce) || nonce < 100_000_000 || nonce > 999_999_999)
    throw new RangeError(`nonce must have exactly 9 digits, got ${nonce}`);
  return nonce;
}

type LineFormat = (path: string, lineNo: number, line: string) => string;

const PLAIN: LineFormat = (_p, _n, line) => line;
const FORMATS: Record<string, { head: (path: string) => string; line: LineFormat }> = {
  read_file: { head: (p) => `// ${p}\n`, line: (_p, n, line) => `${String(n).padStart(6)}\t${line}` },
  grep: { head: () => '', line: (p, n, line) => `${p}:${n}:${line}` },
  git_diff: {
    head: (p) => `diff --git a/${p} b/${p}\n--- a/${p}\n+++ b/${p}\n@@ -1,0 +1,0 @@\n`,
    line: (_p, _n, line) => `+${line}`,
  },
  apply_patch: { head: (p) => `Applied 1 hunk to ${p}. Result:\n`, line: PLAIN },
  run_shell: { head: (p) => `$ cat ${p}\nexit_code: 0\nstdout:\n`, line: PLAIN },
  run_tests: {
    head: (p) => `FAIL ${p.replace(/\.ts$/, '.spec.ts')}\n  ● source under test:\n`,
    line: (_p, _n, line) => `    ${line}`,
  },
};

/**
 * One tool output: `bytes` (drawn from the range) of lines cut from the corpus at a random file and
 * line, continuing into the next files as needed, framed the way that tool would frame it.
 */
export function toolOutput(
  corpus: readonly CorpusFile[],
  seed: number,
  range: readonly [number, number],
  toolName: string,
): string {
  const random = createRandom(seed);
  const target = pickInt(random, range[0], range[1]);
  const format = FORMATS[toolName] ?? { head: (p: string) => `# ${toolName}: ${p}\n`, line: PLAIN };
  let fileIndex = pickIndex(random, corpus.length);
  const first = corpus[fileIndex].text.split('\n');
  let lineNo = pickIndex(random, Math.max(1, first.length - 10));
  let out = '';
  for (let files = 0; files < corpus.length && out.length < target; files++) {
    const file = corpus[fileIndex];
    const lines = files === 0 ? first : file.text.split('\n');
    out += format.head(file.path);
    for (; lineNo < lines.length && out.length < target; lineNo++)
      out += `${format.line(file.path, lineNo + 1, lines[lineNo])}\n`;
    fileIndex = (fileIndex + 1) % corpus.length;
    lineNo = 0;
  }
  // Whole lines, cut at the target: the last line may be partial, as a truncating tool would leave it.
  return out.slice(0, target);
}
