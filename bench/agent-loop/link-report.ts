/**
 * Side by side across link presets: reads `<dir>/<preset>/agent-loop.json` written by
 * `bench:agent-loop -- --link <preset> --out <dir>/<preset>` and writes `<dir>/link.md` with the
 * rollout time of each mode per preset and the WebSocket gain over both HTTP modes.
 *
 *   npx tsx bench/agent-loop/link-report.ts [dir]    (default bench/results/link)
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LINK_PRESET_NAMES, LINK_PRESETS } from '../link/link-emulator';
import type { BenchReport } from './report-json';
import { ESTIMATOR, fmt } from './summary';

/** One preset's interleaved rollout times (ms) by mode at one TPS. */
export interface LinkRow {
  preset: string;
  tps: number;
  rolloutMs: Record<string, number>;
}

/** The rows of one report: every TPS setting's interleaved rollout times. */
export function linkRows(preset: string, report: Pick<BenchReport, 'summaries'>): LinkRow[] {
  const tpsList = [...new Set(report.summaries.map((s) => s.tps))];
  return tpsList.map((tps) => ({
    preset,
    tps,
    rolloutMs: Object.fromEntries(
      report.summaries.filter((s) => s.tps === tps && s.phase === 'interleaved').map((s) => [s.mode, s.rolloutMs]),
    ),
  }));
}

/** `1 − a / b` as a percentage: how much faster a is than b. */
const gain = (a: number, b: number) => `${fmt((1 - a / b) * 100)}%`;

/** The Markdown side-by-side table. */
export function renderLinkReport(rows: readonly LinkRow[], generatedAt: string): string {
  const lines = [
    "# Agent-loop benchmark over a user's link (simulated engine)",
    '',
    `Generated ${generatedAt} from the per-preset reports in this folder. Each preset ran the agent-loop benchmark with the link emulator ` +
      '(bench/link: a TCP proxy on 127.0.0.1 shaping bandwidth each way and adding half the RTT each way, shared by all connections) between every ' +
      'client and the edge. Rollout time = ' +
      ESTIMATOR.split('; ').pop() +
      '. The seed\'s claim to compare with: WebSocket mode "up to 40% faster" for agent loops with many tool calls.',
    '',
    '| link | TPS | http-stateless (s) | http-previous (s) | ws (s) | ws faster than http-stateless | ws faster than http-previous |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const m = r.rolloutMs;
    const desc = r.preset in LINK_PRESETS ? LINK_PRESETS[r.preset as keyof typeof LINK_PRESETS].description : r.preset;
    lines.push(
      `| ${r.preset} (${desc}) | ${r.tps} | ${fmt(m['http-stateless'] / 1000)} | ${fmt(m['http-previous'] / 1000)} | ${fmt(m.ws / 1000)} | ${gain(m.ws, m['http-stateless'])} | ${gain(m.ws, m['http-previous'])} |`,
    );
  }
  lines.push(
    '',
    'Per-preset details (overheads, stage times, the isolation and order design): `<preset>/agent-loop.md`.',
    '',
  );
  return lines.join('\n');
}

function main(): void {
  const dir = resolve(process.argv[2] ?? join(__dirname, '..', 'results', 'link'));
  const rows: LinkRow[] = [];
  for (const preset of LINK_PRESET_NAMES) {
    const file = join(dir, preset, 'agent-loop.json');
    if (!existsSync(file)) continue;
    rows.push(...linkRows(preset, JSON.parse(readFileSync(file, 'utf8')) as BenchReport));
  }
  if (rows.length === 0) throw new Error(`no <preset>/agent-loop.json under ${dir}`);
  writeFileSync(join(dir, 'link.md'), renderLinkReport(rows, new Date().toISOString()));
  process.stdout.write(`wrote ${join(dir, 'link.md')}\n`);
}

if (require.main === module) main();
