/**
 * First visible text with output moderation on and off, side by side in one run: two stacks (the
 * same simulated engine at its default speed, `EDGE_OUTPUT_MODERATION` true and false), one
 * WebSocket conversation on each, turns alternating between them, so both see the same load.
 * Per turn: client send → first `response.output_text.delta` frame (the first text a user sees),
 * and → the `response.output_item.added` that opens the message (moderation does not hold it).
 * Writes first-text.{json,md}.
 *
 *   npx tsx bench/load/first-text.ts [--turns N] [--out DIR]
 */
import { execSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import WebSocket from 'ws';
import { startStack, type Stack } from '@fastloop/launcher';
import { percentile } from '../agent-loop/summary';

const REPO_ROOT = resolve(__dirname, '..', '..');
const API_KEY = 'sk-bench-first-text';
/** The target: first visible text with moderation on within this factor of off. */
export const TARGET_RATIO = 1.25;

interface Turn {
  firstItemMs: number;
  firstTextMs: number;
}

/** One WebSocket conversation: each turn continues the previous response. */
class Conversation {
  private previous: string | undefined;

  private constructor(private readonly ws: WebSocket) {}

  static async open(url: string): Promise<Conversation> {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${API_KEY}` }, perMessageDeflate: false });
    await new Promise<void>((res, rej) => {
      ws.once('open', () => res());
      ws.once('error', rej);
    });
    return new Conversation(ws);
  }

  turn(input: string): Promise<Turn> {
    const sent = performance.now();
    const t: Turn = { firstItemMs: NaN, firstTextMs: NaN };
    return new Promise<Turn>((resolve, reject) => {
      const onMessage = (data: WebSocket.RawData) => {
        const e = JSON.parse(data.toString()) as { type: string; response?: { id: string } };
        const at = performance.now() - sent;
        if (e.type === 'response.output_item.added' && Number.isNaN(t.firstItemMs)) t.firstItemMs = at;
        if (e.type === 'response.output_text.delta' && Number.isNaN(t.firstTextMs)) t.firstTextMs = at;
        if (e.type === 'response.completed') {
          this.ws.off('message', onMessage);
          this.previous = e.response?.id;
          resolve(t);
        } else if (e.type === 'response.failed' || e.type === 'error' || e.type === 'response.incomplete') {
          this.ws.off('message', onMessage);
          reject(new Error(`turn ended with ${data.toString().slice(0, 300)}`));
        }
      };
      this.ws.on('message', onMessage);
      this.ws.send(
        JSON.stringify({
          type: 'response.create',
          model: 'fastloop-sim',
          input,
          store: false,
          ...(this.previous ? { previous_response_id: this.previous } : {}),
        }),
      );
    });
  }

  close(): void {
    this.ws.close();
  }
}

function startOne(moderation: boolean): Promise<Stack> {
  return startStack({
    port: 0,
    privateRedis: true,
    logLevel: 'warn',
    env: { FASTLOOP_API_KEYS: `${API_KEY}:bench`, EDGE_OUTPUT_MODERATION: String(moderation) },
  });
}

const median = (xs: number[]) => percentile(xs, 0.5);
const round = (x: number) => Math.round(x * 10) / 10;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const opt = (name: string, dflt: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : dflt;
  };
  const turns = Number(opt('turns', args.includes('--quick') ? '12' : '40'));
  const out = opt('out', join(REPO_ROOT, 'bench', 'results'));
  const [on, off] = await Promise.all([startOne(true), startOne(false)]);
  const runs: Record<'on' | 'off', Turn[]> = { on: [], off: [] };
  try {
    const conv = { on: await Conversation.open(on.wsUrl), off: await Conversation.open(off.wsUrl) };
    // Turn 0 opens each conversation (not recorded); then they alternate, so both share the load.
    for (let t = 0; t <= turns; t++) {
      for (const k of t % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const r = await conv[k].turn(`Question ${t}: how does the relay work?`);
        if (t > 0) runs[k].push(r);
      }
    }
    conv.on.close();
    conv.off.close();
  } finally {
    await Promise.all([on.stop(), off.stop()]);
  }
  const load = execSync('uptime').toString().trim();
  const stat = (rs: Turn[], f: (r: Turn) => number) => ({
    p50: round(median(rs.map(f))),
    p90: round(percentile(rs.map(f), 0.9)),
  });
  const report = {
    turns,
    load,
    on: { firstText: stat(runs.on, (r) => r.firstTextMs), firstItem: stat(runs.on, (r) => r.firstItemMs) },
    off: { firstText: stat(runs.off, (r) => r.firstTextMs), firstItem: stat(runs.off, (r) => r.firstItemMs) },
    ratioP50: 0,
    target: TARGET_RATIO,
    met: false,
  };
  report.ratioP50 = Math.round((report.on.firstText.p50 / report.off.firstText.p50) * 100) / 100;
  report.met = report.ratioP50 <= TARGET_RATIO;
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'first-text.json'), `${JSON.stringify(report, null, 2)}\n`);
  const md = [
    '# First visible text, output moderation on vs off',
    '',
    `Two stacks side by side in one run, the simulated engine at its defaults (50 ms TTFT, 1,000 tokens/s,`,
    `40-word answers), one WebSocket conversation each, ${turns} continuations alternating between them.`,
    `Load: \`${load}\`.`,
    '',
    '| moderation | client send → first text delta p50 / p90 (ms) | → first output item p50 / p90 (ms) |',
    '|---|---|---|',
    `| on | ${report.on.firstText.p50} / ${report.on.firstText.p90} | ${report.on.firstItem.p50} / ${report.on.firstItem.p90} |`,
    `| off | ${report.off.firstText.p50} / ${report.off.firstText.p90} | ${report.off.firstItem.p50} / ${report.off.firstItem.p90} |`,
    '',
    `**On / off (p50): ${report.ratioP50}×** — target ≤ ${TARGET_RATIO}×: ${report.met ? 'met' : 'not met'}.`,
    '',
  ].join('\n');
  writeFileSync(join(out, 'first-text.md'), md);
  process.stdout.write(`${md}\nwrote ${join(out, 'first-text.{json,md}')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(
    `first-text benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
