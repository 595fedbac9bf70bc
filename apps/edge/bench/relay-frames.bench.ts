/**
 * What the edge pays per relayed token, by how many tokens each delta frame carries: a long
 * harmony answer parsed (applyParseEvents, TurnWriter) and sent as WebSocket frames to a client
 * in another process over loopback, tokens fed `chunk` at a time; with and without the microtask
 * cork. CPU time of this process only (the client's is not counted).
 *
 *   npx tsx apps/edge/bench/relay-frames.bench.ts
 *
 * Measured (2 shared cores, Node 20), CPU µs per token: 1 token a frame ≈ 8.8–9.5, 4 ≈ 2.3,
 * 18 (the simulated engine's chunk at 4,000 tokens/s) ≈ 0.66, 56 (one output-moderation release
 * when moderation judged 256 characters a call) ≈ 0.29, 256 ≈ 0.17: a frame costs ≈ 8.5 µs whatever
 * it carries (the write syscall, the event object, JSON). The cork changes nothing when a
 * tick sends one frame, and takes a short turn (7 events in one tick) from ≈ 86 to ≈ 56 µs.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { getProfile } from '@fastloop/model-profiles';
import { createUsage, type ResponseCreateRequest } from '@fastloop/protocol';
import { applyParseEvents } from '../src/turn/apply-parse-events';
import { TurnWriter } from '../src/turn/turn-writer';
import { microtaskCork } from '../src/session/microtask-cork';

const profile = getProfile('harmony-o200k');
const WORDS = 'the relay forwards each parsed piece of text as soon as it arrives from the worker'.split(' ');
const answer = Array.from({ length: 1500 }, (_, i) => WORDS[i % WORDS.length]).join(' ');
const completion = profile.renderCompletion({ kind: 'message', role: 'assistant', text: answer });

// The client: counts frames and says when a response ended; runs in its own process.
const CLIENT = `
const WebSocket = require('ws');
const ws = new WebSocket(process.argv[1], { perMessageDeflate: false });
ws.on('message', (data) => { if (data.toString() === 'end') process.send('done'); });
ws.on('open', () => process.send('open'));
process.on('disconnect', () => ws.close());
`;

async function main(): Promise<void> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  await once(wss, 'listening');
  const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  const client = fork('-e', [CLIENT, url], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [[socket]] = (await Promise.all([once(wss, 'connection'), once(client, 'message')])) as [[WebSocket], unknown];
  const raw = (socket as unknown as { _socket: import('node:net').Socket })._socket;
  process.stdout.write(
    `${completion.length} tokens a response; CPU µs per token of this process (parse, events, JSON, frames)\n`,
  );
  process.stdout.write(`${'tokens/frame'.padEnd(14)}${'no cork'.padStart(10)}${'corked'.padStart(12)}\n`);
  for (const chunk of [1, 4, 18, 56, 256]) {
    const row = [];
    for (const corked of [false, true]) row.push(await measure(socket, raw, client, chunk, corked));
    process.stdout.write(
      `${String(chunk).padEnd(14)}${row.map((v, i) => v.toFixed(2).padStart(i === 0 ? 10 : 12)).join('')}\n`,
    );
  }
  process.stdout.write(`\nshort turns (a ${call.length}-token tool call in one chunk, 7 events): CPU µs per turn\n`);
  const turns = [];
  for (const corked of [false, true]) turns.push(await measureTurns(socket, raw, client, corked));
  process.stdout.write(`${''.padEnd(14)}${turns.map((v, i) => v.toFixed(1).padStart(i === 0 ? 10 : 12)).join('')}\n`);
  client.disconnect();
  wss.close();
}

const call = profile.renderCompletion({
  kind: 'function_call',
  name: 'read_file',
  arguments: '{"path":"src/index.ts"}',
  callId: '',
});
const usage = createUsage({ inputTokens: 2000, outputTokens: call.length });

/** Whole turns, each in one tick: created → the call's item → completed; returns CPU µs per turn. */
async function measureTurns(
  ws: WebSocket,
  raw: import('node:net').Socket,
  client: ReturnType<typeof fork>,
  corked: boolean,
): Promise<number> {
  const cork = corked ? microtaskCork(raw) : () => undefined;
  const send = (event: object) => {
    cork();
    ws.send(JSON.stringify(event));
  };
  let n = 0;
  let cpu = 0;
  for (let round = 0; cpu < 1_000_000 || round < 3; round++) {
    const start = process.cpuUsage();
    const ended = once(client, 'message');
    for (let t = 0; t < 500; t++) {
      const writer = new TurnWriter(
        { model: 'm', input: 'hi' } as ResponseCreateRequest,
        { id: 'resp_1', model: 'm' },
        send,
      );
      const parser = profile.createOutputParser();
      writer.created();
      applyParseEvents(writer, parser.push(call));
      applyParseEvents(writer, parser.finish());
      writer.completed(usage);
      await new Promise((r) => setImmediate(r));
    }
    ws.send('end');
    await ended;
    const used = process.cpuUsage(start);
    if (round > 0) {
      cpu += used.user + used.system;
      n += 500;
    }
  }
  return cpu / n;
}

/** Relays the answer until ~1 s of CPU was spent; returns CPU µs per token. */
async function measure(
  ws: WebSocket,
  raw: import('node:net').Socket,
  client: ReturnType<typeof fork>,
  chunk: number,
  corked: boolean,
): Promise<number> {
  const cork = corked ? microtaskCork(raw) : () => undefined;
  const send = (event: object) => {
    cork();
    ws.send(JSON.stringify(event));
  };
  let tokens = 0;
  let cpu = 0;
  for (let round = 0; cpu < 1_000_000 || round < 3; round++) {
    const start = process.cpuUsage();
    const writer = new TurnWriter(
      { model: 'm', input: 'hi' } as ResponseCreateRequest,
      { id: 'resp_1', model: 'm' },
      send,
    );
    const parser = profile.createOutputParser();
    const ended = once(client, 'message');
    for (let i = 0; i < completion.length; i += chunk) {
      applyParseEvents(writer, parser.push(completion.slice(i, i + chunk)));
      // One chunk per turn of the event loop, as gRPC messages arrive.
      await new Promise((r) => setImmediate(r));
    }
    applyParseEvents(writer, parser.finish());
    writer.endItem();
    ws.send('end');
    await ended;
    const used = process.cpuUsage(start);
    if (round > 0) {
      cpu += used.user + used.system;
      tokens += completion.length;
    }
  }
  return cpu / tokens;
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
