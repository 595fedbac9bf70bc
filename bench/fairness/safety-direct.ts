// The safety service alone, between two tenants, as the edge reaches it (4 multiplexed
// ClassifyStream streams): a neighbour's small Classify every 100 ms, alone and then beside a
// hostile tenant sending 3 MB of fake keys per call on 3 connections' worth of concurrency (and
// every fourth call six 3.9 MB items). Separates the safety service's own fairness from the edge's
// (which parses and forwards those megabytes on its event loop: bench/fairness/main.ts measures both).
// With `--root <dir>` it runs the safety service of another checkout (e.g. the code before issue 17).
// Calls over 256 KiB go as plain calls, as the edge sends them (MUX_BULK_MESSAGE_BYTES);
// `--all-on-streams` sends them on the shared streams as the edge did before.
// Run: npx tsx bench/fairness/safety-direct.ts --label <name> [--root <dir>] [--all-on-streams] [--seconds S]
//   (adds the run to bench/results/fairness-safety-direct.{json,md})
import { join, resolve } from 'node:path';
import { safetyV1 } from '@fastloop/proto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import {
  callUnary,
  createGrpcClient,
  getFreePort,
  MUX_BULK_MESSAGE_BYTES,
  MuxClient,
  startNodeService,
} from '@fastloop/service-kit';
import { percentile } from '../agent-loop/summary';
import { keyWall } from '@fastloop/service-kit/testing';

const MB = 1 << 20;

async function main(): Promise<void> {
  const root = resolve(argValue('--root') ?? join(__dirname, '..', '..'));
  const seconds = Number(argValue('--seconds') ?? 10);
  const [grpcPort, adminPort] = [await getFreePort(), await getFreePort()];
  const safety = await startNodeService({
    name: 'safety',
    entry: join(root, 'apps/safety/src/main.ts'),
    cwd: root,
    env: {
      ...process.env,
      GRPC_PORT: String(grpcPort),
      ADMIN_PORT: String(adminPort),
      LOG_LEVEL: 'error',
      SAFETY_STATE_SECRET: 'bench-only-state-secret-value',
    },
    readyUrl: `http://127.0.0.1:${adminPort}/readyz`,
  });
  const client = createGrpcClient(safetyV1.SafetyServiceClient, `127.0.0.1:${grpcPort}`);
  const mux = new MuxClient(() => client.classifyStream(), { streams: 4 });
  const bulkPlain = !process.argv.includes('--all-on-streams');
  const call = (tenant: string, items: safetyV1.SafetyItem[]) => {
    const request = { state: Buffer.alloc(0), items, tenant, model: 'm' };
    const big = items.reduce((n, i) => n + i.text.length, 0) > MUX_BULK_MESSAGE_BYTES;
    return bulkPlain && big
      ? callUnary(client.classify, client, request, { deadlineMs: 5_000 })
      : mux.unary(request, { deadlineMs: 5_000 });
  };
  const carried = (text: string): safetyV1.SafetyItem => ({
    itemType: 'mcp_call',
    role: '',
    text,
    source: safetyV1.ItemSource.ITEM_SOURCE_MODEL,
  });
  try {
    const neighbour = async (): Promise<{ ms: number[]; failed: Record<string, number> }> => {
      const ms: number[] = [];
      const failed: Record<string, number> = {};
      const until = performance.now() + seconds * 1000;
      while (performance.now() < until) {
        const t0 = performance.now();
        await call('neighbour', [
          {
            itemType: 'function_call_output',
            role: '',
            text: 'total 8\n-rw-r--r-- 1 a b 42 README.md\n',
            source: safetyV1.ItemSource.ITEM_SOURCE_TOOL,
          },
        ]).then(
          () => ms.push(performance.now() - t0),
          (err: { code?: string }) => (failed[err.code ?? 'error'] = (failed[err.code ?? 'error'] ?? 0) + 1),
        );
        await new Promise((r) => setTimeout(r, 100));
      }
      return { ms, failed };
    };
    const summarize = (name: string, r: { ms: number[]; failed: Record<string, number> }) =>
      `${name}: ${r.ms.length} calls, p50 ${percentile(r.ms, 0.5).toFixed(1)} ms, p99 ${percentile(r.ms, 0.99).toFixed(1)} ms, failed ${JSON.stringify(r.failed)}`;
    await neighbour(); // warm-up
    const alone = await neighbour();
    process.stdout.write(`${summarize('alone', alone)}\n`);
    let running = true;
    const hostileOutcomes: Record<string, number> = {};
    const wall = keyWall(3 * MB);
    const big = keyWall(3.9 * MB, 2);
    const hostile = Array.from({ length: 3 }, async () => {
      for (let round = 0; running; round++) {
        const items = round % 4 === 3 ? Array.from({ length: 6 }, () => carried(big)) : [carried(`${round}\n${wall}`)];
        const code = await call('hostile', items).then(
          (r) => (r.verdict === safetyV1.Verdict.VERDICT_BLOCK ? 'blocked' : 'allowed'),
          (err: { code?: string }) => err.code ?? 'error',
        );
        hostileOutcomes[code] = (hostileOutcomes[code] ?? 0) + 1;
      }
    });
    await new Promise((r) => setTimeout(r, 1_000));
    const beside = await neighbour();
    running = false;
    await Promise.all(hostile);
    process.stdout.write(
      `${summarize('beside the flood', beside)}\nhostile calls: ${JSON.stringify(hostileOutcomes)}\n`,
    );
    record({
      label: argValue('--label') ?? 'unnamed',
      bulkOnPlainCalls: bulkPlain,
      seconds,
      alone: stats(alone),
      beside: stats(beside),
      hostileOutcomes,
    });
  } finally {
    mux.close();
    client.close();
    await safety.stop(5_000);
  }
}

interface Stats {
  calls: number;
  p50Ms: number;
  p99Ms: number;
  failed: Record<string, number>;
}

const stats = (r: { ms: number[]; failed: Record<string, number> }): Stats => ({
  calls: r.ms.length,
  p50Ms: percentile(r.ms, 0.5),
  p99Ms: percentile(r.ms, 0.99),
  failed: r.failed,
});

interface Run {
  label: string;
  bulkOnPlainCalls: boolean;
  seconds: number;
  alone: Stats;
  beside: Stats;
  hostileOutcomes: Record<string, number>;
}

/** Adds (or replaces, by label) this run in the results and rewrites the table. */
function record(run: Run): void {
  const dir = join(__dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'fairness-safety-direct.json');
  let runs: Run[] = [];
  try {
    runs = (JSON.parse(readFileSync(file, 'utf8')) as { runs: Run[] }).runs;
  } catch {
    runs = [];
  }
  runs = [...runs.filter((r) => r.label !== run.label), run];
  writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString().slice(0, 10), runs }, null, 2)}\n`);
  const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');
  const lines = [
    '# The safety service between two tenants',
    '',
    "A neighbour tenant sends a small Classify every 100 ms on the edge's transport (4 multiplexed ClassifyStream",
    'streams), alone and then beside a hostile tenant with 3 calls in flight of 3 MB of fake keys each (every fourth',
    'call six 3.9 MB items). `npx tsx bench/fairness/safety-direct.ts --label <run> [--root <checkout>] [--all-on-streams]`.',
    '',
    '| run | bulk calls | neighbour alone: calls, p50 / p99 (ms) | beside the flood: calls, p50 / p99 (ms), failed | hostile calls |',
    '|---|---|---|---|---|',
    ...runs.map(
      (r) =>
        `| ${r.label.replace(/_/g, ' ')} | ${r.bulkOnPlainCalls ? 'own HTTP/2 stream' : 'shared mux streams'} | ${r.alone.calls}, ${ms(r.alone.p50Ms)} / ${ms(r.alone.p99Ms)} | ${r.beside.calls}, ${ms(r.beside.p50Ms)} / ${ms(r.beside.p99Ms)}, ${JSON.stringify(r.beside.failed)} | ${JSON.stringify(r.hostileOutcomes)} |`,
    ),
    '',
  ];
  writeFileSync(join(dir, 'fairness-safety-direct.md'), lines.join('\n'));
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

void main();
