// permessage-deflate on WebSocket mode: what it costs the edge (CPU per frame, in the serving
// process alone) against what it saves on the link (bytes per turn, and a turn's time on each link
// preset). The turns are what a coding agent receives: response.created, .in_progress and
// .completed echo ~9 kB of instructions and the agent's tools; a message streams as ~4-character
// deltas. The server uses the edge's own option builder (apps/edge/src/ws/ws-deflate.ts).
// Run: npx tsx bench/link/ws-deflate.bench.ts [--turns N] [--rounds R] [--out DIR]   (writes DIR/ws-deflate.{json,md}; default bench/results)
import { fork } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import {
  createResponseObject,
  createUsage,
  EventStream,
  OutputAssembler,
  ResponseCreateRequestSchema,
  type ResponseStreamEvent,
} from '@fastloop/protocol';
// eslint-disable-next-line @nx/enforce-module-boundaries -- measures the edge's internals in process; an app has no public entry
import {
  compressFrame,
  DEFAULT_WS_DEFLATE,
  perMessageDeflate,
  type WsDeflateSettings,
} from '../../apps/edge/src/ws/ws-deflate';
import { AGENT_TOOLS } from '../agent-loop/agent-tools';
import { buildInstructions } from '../agent-loop/instructions';
import { LINK_PRESETS, startLinkEmulator, type LinkPresetName } from './link-emulator';

const VARIANTS: Record<string, WsDeflateSettings | undefined> = {
  off: undefined,
  'every frame, level 1, 2^13': { ...DEFAULT_WS_DEFLATE, thresholdBytes: 0 },
  'default (≥512 B, level 1, 2^13 window, memLevel 6)': DEFAULT_WS_DEFLATE,
  '≥512 B, level 6, 2^13': { ...DEFAULT_WS_DEFLATE, level: 6 },
  '≥512 B, level 1, 2^15 window, memLevel 8': { ...DEFAULT_WS_DEFLATE, windowBits: 15, memLevel: 8 },
  '≥512 B, level 1, 2^10 window, memLevel 4': { ...DEFAULT_WS_DEFLATE, windowBits: 10, memLevel: 4 },
};

/** One turn's server frames, as the edge writes them (JSON text), for turn `n` of a conversation. */
function turnFrames(n: number, source: string): string[] {
  const body = ResponseCreateRequestSchema.parse({
    model: 'bench',
    instructions: buildInstructions(7),
    tools: AGENT_TOOLS,
    input: 'go',
    store: false,
  });
  const response = createResponseObject(body, { id: `resp_${n}`, model: 'bench', createdAt: 0 });
  const frames: ResponseStreamEvent[] = [];
  const stream = new EventStream();
  const out = new OutputAssembler(stream, (e) => frames.push(e));
  frames.push(stream.created(response), stream.inProgress(response));
  out.startMessage();
  const text = source.slice((n * 1_200) % (source.length - 1_200)).slice(0, 1_200);
  for (let i = 0; i < text.length; i += 4) out.appendText(text.slice(i, i + 4));
  out.endItem();
  response.output = [...out.output];
  response.status = 'completed';
  response.usage = createUsage({ inputTokens: 3_000, outputTokens: 300 });
  frames.push(stream.completed(response));
  return frames.map((f) => JSON.stringify(f));
}

/** The serving process: answers each client message with the next turn's frames; reports its CPU. */
function serve(settings: WsDeflateSettings | undefined): void {
  const source = readFileSync(resolve(__dirname, '../../apps/edge/src/turn/run-turn.ts'), 'utf8');
  const wss = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    perMessageDeflate: perMessageDeflate(settings ?? { ...DEFAULT_WS_DEFLATE, enabled: false }),
  });
  let cpu = process.cpuUsage();
  let frames = 0;
  wss.on('connection', (ws) => {
    let n = 0;
    ws.on('message', () => {
      for (const f of turnFrames(n++, source)) {
        ws.send(f, { compress: settings !== undefined && compressFrame(settings, f.length) });
        frames++;
      }
    });
  });
  // The frames are built before the clock: only sending (and deflating) is measured.
  process.on('message', (m: string) => {
    if (m === 'start') {
      cpu = process.cpuUsage();
      frames = 0;
    } else if (m === 'stop') {
      const used = process.cpuUsage(cpu);
      process.send!({ cpuUs: used.user + used.system, frames });
    }
  });
  wss.on('listening', () => process.send!({ port: (wss.address() as AddressInfo).port }));
}

/** `turns` turns on one connection through `preset`; bytes and ms per turn. */
async function drive(port: number, preset: LinkPresetName, turns: number) {
  const link = await startLinkEmulator({ host: '127.0.0.1', port }, LINK_PRESETS[preset]);
  const ws = new WebSocket(`ws://127.0.0.1:${link.port}/`, { perMessageDeflate: true });
  await new Promise((r) => ws.once('open', r));
  const socket = (ws as unknown as { _socket: Socket })._socket;
  const start = socket.bytesRead;
  let ms = 0;
  for (let t = 0; t < turns; t++) {
    const t0 = performance.now();
    await new Promise<void>((done) => {
      const on = (d: Buffer) => {
        if (d.includes('"response.completed"')) {
          ws.off('message', on);
          done();
        }
      };
      ws.on('message', on);
      ws.send('{"type":"response.create"}');
    });
    ms += performance.now() - t0;
  }
  const bytes = socket.bytesRead - start;
  ws.close();
  await link.close();
  return { bytesPerTurn: bytes / turns, msPerTurn: ms / turns };
}

/** One variant's figures from one round: bytes, server CPU per frame, ms per turn on each preset. */
async function measure(settings: WsDeflateSettings | undefined, turns: number): Promise<Record<string, number>> {
  const child = fork(__filename, ['serve', JSON.stringify(settings ?? null)], { execArgv: process.execArgv });
  try {
    const port = await new Promise<number>((r) => child.once('message', (m: { port: number }) => r(m.port)));
    const row: Record<string, number> = {};
    for (const preset of ['cloud', 'home'] as LinkPresetName[]) {
      child.send('start');
      const r = await drive(port, preset, turns);
      child.send('stop');
      const cpu = await new Promise<{ cpuUs: number; frames: number }>((ok) => child.once('message', ok));
      row.bytesPerTurn = Math.round(r.bytesPerTurn);
      row[`${preset}CpuUsPerFrame`] = cpu.cpuUs / cpu.frames;
      row[`${preset}MsPerTurn`] = r.msPerTurn;
    }
    return row;
  } finally {
    child.kill();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function run(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string, def: number) => Number(args[args.indexOf(name) + 1] || 0) || def;
  const turns = args.includes('--turns') ? flag('--turns', 10) : 10;
  const rounds = args.includes('--rounds') ? flag('--rounds', 3) : 3;
  const outDir = args.includes('--out') ? args[args.indexOf('--out') + 1] : resolve(__dirname, '../results');
  const samples = new Map<string, Record<string, number>[]>();
  // Variants interleaved round by round, so a load spike from elsewhere hits them all alike.
  for (let round = 0; round < rounds; round++)
    for (const [name, settings] of Object.entries(VARIANTS))
      samples.set(name, [...(samples.get(name) ?? []), await measure(settings, turns)]);
  const rows = [...samples].map(([variant, runs]) => {
    const m = (k: string) => +median(runs.map((r) => r[k])).toFixed(1);
    return {
      variant,
      bytesPerTurn: m('bytesPerTurn'),
      cpuUsPerFrame: +((m('cloudCpuUsPerFrame') + m('homeCpuUsPerFrame')) / 2).toFixed(1),
      cloudMsPerTurn: m('cloudMsPerTurn'),
      homeMsPerTurn: m('homeMsPerTurn'),
    };
  });
  for (const r of rows) process.stdout.write(`${JSON.stringify(r)}\n`);
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'ws-deflate.json'), JSON.stringify({ turns, rounds, load, rows }, null, 2));
  const md = [
    `# permessage-deflate on WebSocket mode (${turns} turns per connection, median of ${rounds} interleaved rounds; load ${load})`,
    '',
    'Bytes are exact; CPU (the serving process alone, per frame sent) and ms per turn vary with the',
    "machine's load: compare rows of one run, and rerun on an idle machine before quoting absolute figures.",
    '',
    '| variant | bytes/turn | server CPU µs/frame | cloud ms/turn | home ms/turn |',
    '|---|---|---|---|---|',
    ...rows.map(
      (r) => `| ${r.variant} | ${r.bytesPerTurn} | ${r.cpuUsPerFrame} | ${r.cloudMsPerTurn} | ${r.homeMsPerTurn} |`,
    ),
  ].join('\n');
  writeFileSync(join(outDir, 'ws-deflate.md'), `${md}\n`);
}

if (process.argv[2] === 'serve') serve(JSON.parse(process.argv[3]) ?? undefined);
else void run();
