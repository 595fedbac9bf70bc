// Fairness between tenants (issue 17): a normal tenant's agent loop (WebSocket agent rollouts:
// instructions, ten tools, source-file tool outputs) measured alone, then beside one hostile
// tenant of one class (CPU shapes, safety flood, slot flood, memory flood), on a fresh stack per
// class. Reports the normal tenant's first-output p50/p99 and failed turns in both phases, their
// ratio against the target (p99 within 1.2× of alone, 0 failed turns), and how the hostile
// tenant's own requests ended. Each class runs on its own (`--classes slots,safety`).
// Run (on an otherwise idle machine): npx tsx bench/fairness/main.ts [--classes a,b] [--duration S]
//   [--loops N] [--quick]   (writes bench/results/fairness.{json,md}; --quick: bench/results/quick/)
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { startStack, type Stack } from '@fastloop/launcher';
import { SERVICE_NODE_ARGS_ENV } from '@fastloop/service-kit';
import { badJson, type Target } from '@fastloop/service-kit/testing';
import { loadCorpus } from '../agent-loop/source-corpus';
import { runLoops, type LoopsOptions, type LoopsResult } from '../load/agent-loops';
import { fork, type ChildProcess } from 'node:child_process';
import { CLASS_DESCRIPTIONS, CLASSES, type HostileClass } from './hostile';

const REPO_ROOT = resolve(__dirname, '..', '..');
const NORMAL_KEY = 'sk-bench-normal';
const HOSTILE_KEY = 'sk-bench-hostile';
const TARGET_P99_RATIO = 1.2;
const progress = (line: string) => process.stderr.write(`${line}\n`);

/** One stack's settings for every class, so classes compare. */
const STACK_ENV = {
  FASTLOOP_API_KEYS: `${NORMAL_KEY}:normal,${HOSTILE_KEY}:hostile`,
  SIM_JITTER: '0',
  SIM_TTFT_MS: '20',
  SIM_TOKENS_PER_SECOND: '1000',
  SIM_TOOL_CALLS: '4',
  INFERENCE_MAX_CONCURRENCY: '16',
  // Output moderation's relay cost would measure the edge's relay of the hostile's streams, not
  // the class under test; both phases run without it.
  EDGE_OUTPUT_MODERATION: 'false',
  // The loops' edge watch reads the edge's heap after a forced GC (POST /debug/gc).
  [SERVICE_NODE_ARGS_ENV]: [process.env[SERVICE_NODE_ARGS_ENV], '--expose-gc'].filter(Boolean).join(' '),
};

interface Phase {
  firstOutputP50Ms: number;
  firstOutputP99Ms: number;
  turns: number;
  failedTurns: number;
  errorKinds: Record<string, number>;
  /** An edge-only request (bad JSON → 400) every 50 ms meanwhile: its p99 and how many were not 400. */
  edgeOnlyP99Ms: number;
  edgeOnlyWrong: number;
  /** The machine's 1-minute load average at the phase's start and end (os.loadavg, as `uptime`). */
  load: [number, number];
}

interface ClassResult {
  kind: HostileClass;
  description: string;
  alone: Phase;
  beside: Phase;
  p99Ratio: number;
  meetsTarget: boolean;
  hostileOutcomes: Record<string, number>;
}

/**
 * Runs the loops with the edge-only probe beside them: from the loops' start to their end only, so
 * the forced full GCs the loops' edge watch takes before and after (hundreds of ms with a big heap)
 * are not timed as the probe's delay.
 */
async function measure(
  run: (onLoad: LoopsOptions['onLoad']) => Promise<LoopsResult>,
  probeTarget: Target,
): Promise<Phase> {
  const loadStart = loadavg()[0];
  let running = true;
  let started!: () => void;
  const loadStarted = new Promise<void>((resolve) => (started = resolve));
  const probe = (async () => {
    await loadStarted;
    const ms: number[] = [];
    let wrong = 0;
    while (running) {
      const o = await badJson(probeTarget).catch(() => ({ status: 0, ms: Number.NaN }));
      if (o.status === 400) ms.push(o.ms);
      else wrong++;
      await new Promise((r) => setTimeout(r, 50));
    }
    ms.sort((a, b) => a - b);
    return { p99: ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))] ?? Number.NaN, wrong };
  })();
  const r = await run({ started, ended: () => (running = false) }).finally(() => {
    running = false;
    started();
  });
  const edgeOnly = await probe;
  return {
    firstOutputP50Ms: r.firstOutputP50Ms,
    firstOutputP99Ms: r.firstOutputP99Ms,
    turns: r.turns,
    failedTurns: r.errors,
    errorKinds: r.errorKinds,
    edgeOnlyP99Ms: edgeOnly.p99,
    edgeOnlyWrong: edgeOnly.wrong,
    load: [loadStart, loadavg()[0]],
  };
}

async function runClass(kind: HostileClass, durationS: number, loops: number, seed: number): Promise<ClassResult> {
  const stack: Stack = await startStack({ port: 0, logLevel: 'warn', env: STACK_ENV });
  try {
    const corpus = loadCorpus(REPO_ROOT);
    const target = {
      wsUrl: stack.wsUrl,
      apiKey: NORMAL_KEY,
      edgePid: stack.services.edge.pid,
      edgeAdminPort: stack.services.edge.ports.admin,
    };
    progress(`${kind}: warm-up`);
    await runLoops(target, loops, 3, 5, corpus, seed + 1, { settleMs: 500, scope: 'fairness-warm-up' });
    progress(`${kind}: normal tenant alone for ${durationS} s`);
    const probeTarget = { url: stack.url, wsUrl: stack.wsUrl, apiKey: NORMAL_KEY };
    // The same rollouts in both phases, under nonces of their own: the beside phase must not find the
    // alone phase's prompts in the worker's prefix cache (it did until 2026-12-02, which halved its
    // simulated prefill and flattered every ratio).
    const alone = await measure(
      (onLoad) =>
        runLoops(target, loops, durationS, 5, corpus, seed, { settleMs: 500, scope: 'fairness-alone', onLoad }),
      probeTarget,
    );
    progress(`${kind}: normal tenant beside the hostile tenant for ${durationS} s`);
    const hostile = await forkHostile(kind, { url: stack.url, wsUrl: stack.wsUrl, apiKey: HOSTILE_KEY });
    let beside: Phase;
    let hostileOutcomes: Record<string, number>;
    try {
      await new Promise((r) => setTimeout(r, 1_000)); // the attack is under way before the first measured turn
      beside = await measure(
        (onLoad) =>
          runLoops(target, loops, durationS, 5, corpus, seed, { settleMs: 500, scope: 'fairness-beside', onLoad }),
        probeTarget,
      );
    } finally {
      hostileOutcomes = await hostile.stop();
    }
    const p99Ratio = beside.firstOutputP99Ms / alone.firstOutputP99Ms;
    return {
      kind,
      description: CLASS_DESCRIPTIONS[kind],
      alone,
      beside,
      p99Ratio,
      meetsTarget: p99Ratio <= TARGET_P99_RATIO && beside.failedTurns === 0,
      hostileOutcomes,
    };
  } finally {
    await stack.stop();
  }
}

/**
 * The hostile tenant in a child process: its client work (building and sending megabytes) would
 * otherwise run on this process's event loop and delay the normal tenant's measured turns.
 */
async function forkHostile(kind: HostileClass, target: Target): Promise<{ stop(): Promise<Record<string, number>> }> {
  const child: ChildProcess = fork(join(__dirname, 'hostile-process.ts'), [kind, JSON.stringify(target)], {
    execArgv: ['--import', 'tsx'],
  });
  const next = <T>(key: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: Record<string, unknown>) => {
        if (!(key in m)) return;
        child.off('message', onMessage);
        resolve(m[key] as T);
      };
      child.on('message', onMessage);
      child.once('exit', (code) => reject(new Error(`hostile process exited (${code})`)));
    });
  await next<boolean>('started');
  return {
    async stop() {
      const outcomes = next<Record<string, number>>('outcomes');
      child.send('stop');
      const result = await outcomes.catch(() => ({}));
      if (child.exitCode === null) child.kill();
      return result;
    },
  };
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const classes = (argValue('--classes')?.split(',') ?? [...CLASSES]) as HostileClass[];
  for (const c of classes)
    if (!CLASSES.includes(c)) throw new Error(`unknown class ${c}; expected ${CLASSES.join(',')}`);
  const durationS = Number(argValue('--duration') ?? (quick ? 8 : 20));
  const loops = Number(argValue('--loops') ?? 2);
  const results: ClassResult[] = [];
  for (const kind of classes) {
    const r = await runClass(kind, durationS, loops, 4242);
    progress(
      `${kind}: p99 ${r.alone.firstOutputP99Ms.toFixed(1)} → ${r.beside.firstOutputP99Ms.toFixed(1)} ms (${r.p99Ratio.toFixed(2)}×), failed ${r.alone.failedTurns} → ${r.beside.failedTurns}`,
    );
    results.push(r);
  }
  write(results, { quick, durationS, loops });
}

function write(results: ClassResult[], run: { quick: boolean; durationS: number; loops: number }): void {
  const dir = join(REPO_ROOT, 'bench/results', run.quick ? 'quick' : '');
  mkdirSync(dir, { recursive: true });
  const date = new Date().toISOString().slice(0, 10);
  writeFileSync(join(dir, 'fairness.json'), `${JSON.stringify({ date, ...run, env: STACK_ENV, results }, null, 2)}\n`);
  const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');
  const loads = ([a, b]: [number, number]) => `${a.toFixed(1)}–${b.toFixed(1)}`;
  const outcomes = (o: Record<string, number>) =>
    Object.entries(o)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ') || '–';
  const lines = [
    '# Fairness between tenants',
    '',
    `Run ${date}: ${run.loops} WebSocket agent loops of the normal tenant (5-turn rollouts, 2.8–8 KB tool outputs of this`,
    `repository's source) for ${run.durationS} s alone, then ${run.durationS} s beside one hostile tenant, on a fresh stack per class`,
    '(simulated engine at 1,000 tokens/s, INFERENCE_MAX_CONCURRENCY=16 (2 kept from any one tenant), output moderation off). First output = time from',
    '`response.create` to the first output item event. Target: p99 beside ≤ 1.2× alone and 0 failed turns. Beside the',
    'loops, while they run, an edge-only request (bad JSON → 400) every 50 ms: its p99 (target: delayed ≤ 50 ms; the full',
    "GCs the loops' edge watch forces before and after a phase are outside its window). Load: the machine's",
    '1-minute load average (2 cores, shared with other work) at the start and end of each phase. The hostile tenant',
    'runs in a process of its own (building its megabytes must not stall the measuring event loop). Both phases play',
    "the same rollouts under nonces of their own, so neither finds the other's prompts in the worker's prefix cache",
    '(the simulated engine prefills what is not cached at 20,000 tokens/s).',
    '`npx tsx bench/fairness/main.ts`',
    '',
    '| class | p50 alone (ms) | p50 beside (ms) | p99 alone (ms) | p99 beside (ms) | p99 ratio | failed turns alone → beside | target | bad JSON p99 alone → beside (ms) | load (1 min) alone → beside |',
    '|---|---:|---:|---:|---:|---:|---:|---|---:|---|',
    ...results.map(
      (r) =>
        `| ${r.kind} | ${ms(r.alone.firstOutputP50Ms)} | ${ms(r.beside.firstOutputP50Ms)} | ${ms(r.alone.firstOutputP99Ms)} | ${ms(r.beside.firstOutputP99Ms)} | ${r.p99Ratio.toFixed(2)}× | ${r.alone.failedTurns} → ${r.beside.failedTurns} (of ${r.beside.turns}) | ${r.meetsTarget ? 'met' : 'missed'} | ${ms(r.alone.edgeOnlyP99Ms)} → ${ms(r.beside.edgeOnlyP99Ms)} | ${loads(r.alone.load)} → ${loads(r.beside.load)} |`,
    ),
    '',
    '## What each hostile tenant did, and how its own requests ended',
    '',
    ...results.flatMap((r) => [
      `- **${r.kind}**: ${r.description}. Its requests: ${outcomes(r.hostileOutcomes)}.`,
      ...(r.beside.failedTurns > 0 ? [`  Normal tenant's failed turns: ${outcomes(r.beside.errorKinds)}.`] : []),
    ]),
    '',
  ];
  writeFileSync(join(dir, 'fairness.md'), lines.join('\n'));
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

void main();
