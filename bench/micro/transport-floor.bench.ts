// The latency floor of each hop a WebSocket turn crosses, measured between two real processes on
// this machine: raw TCP, raw HTTP/2, a grpc-js InferenceService/Generate call (the generated stubs
// the edge uses, request → handler and chunk write → client) and a `ws` text frame. The agent-loop
// benchmark's per-turn overhead cannot go below the sum of the hops a turn takes, whatever the edge
// does; this puts numbers on that sum.
// Run: npx tsx bench/micro/transport-floor.bench.ts [--iterations N] [--out DIR]   (writes DIR/transport-floor.{json,md}; default bench/results)
import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect as h2connect, createServer as h2server } from 'node:http2';
import { connect as tcpConnect, createServer as tcpServer, type AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { credentials, Server, ServerCredentials, type ServerWritableStream } from '@grpc/grpc-js';
import WebSocket, { WebSocketServer } from 'ws';
import { inferenceV1 } from '@fastloop/proto';
import { DEFAULT_CHANNEL_OPTIONS, MuxClient, MuxServer, type StreamingCall } from '@fastloop/service-kit';

/** Wall-clock ms with µs resolution, comparable across processes on one host. */
const now = () => performance.timeOrigin + performance.now();

interface Ports {
  tcp: number;
  h2: number;
  grpc: number;
  ws: number;
}

async function serve(): Promise<void> {
  const listen = (s: { listen(port: number, host: string, cb: () => void): unknown; address(): unknown }) =>
    new Promise<number>((ok) => s.listen(0, '127.0.0.1', () => ok((s.address() as AddressInfo).port)));
  // TCP: echoes the client's byte with the time it arrived.
  const tcp = tcpServer((c) => {
    c.setNoDelay(true);
    c.on('data', () => c.write(`${now()}\n`));
  });
  // HTTP/2: answers a POST with the times its headers and its body arrived.
  const h2 = h2server();
  h2.on('stream', (stream) => {
    const arrived = now();
    stream.on('data', () => undefined);
    stream.on('end', () => {
      stream.respond({ ':status': 200 });
      stream.end(JSON.stringify({ arrived, ended: now() }));
    });
  });
  // gRPC: the handler reports when it ran, then (after a pause, as an engine would) writes a chunk
  // and says when it wrote it.
  const grpc = new Server();
  const mux = new MuxServer();
  const generate = (call: StreamingCall<inferenceV1.GenerateRequest, inferenceV1.GenerateResponse>) => {
    const arrived = now();
    setTimeout(() => {
      const written = now();
      call.write({
        event: {
          $case: 'chunk',
          value: { tokens: [1], engineElapsedMs: written - arrived, promptTokens: 0, cachedTokens: 0 },
        },
      });
      const done: inferenceV1.GenerateDone = {
        finishReason: inferenceV1.FinishReason.FINISH_REASON_STOP,
        promptTokens: 0,
        cachedTokens: 0,
        completionTokens: 1,
        engineTtftMs: 0,
      };
      call.write({ event: { $case: 'done', value: done } });
      call.end();
      process.send?.({ arrived, written });
    }, 3);
  };
  grpc.addService(inferenceV1.InferenceServiceService, {
    generate: (call: ServerWritableStream<inferenceV1.GenerateRequest, inferenceV1.GenerateResponse>) => generate(call),
    // The edge's multiplexed stream (EDGE_GRPC_MUX): the same handler, one message each way per call.
    generateStream: (stream: Parameters<MuxServer['serveStreaming']>[0]) =>
      mux.serveStreaming(stream as never, generate),
  });
  const grpcPort = await new Promise<number>((ok, fail) =>
    grpc.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) => (err ? fail(err) : ok(port))),
  );
  // WebSocket: answers a text frame with the time it arrived.
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((ok) => wss.once('listening', () => ok()));
  wss.on('connection', (ws) => ws.on('message', () => ws.send(String(now()))));
  const ports: Ports = {
    tcp: await listen(tcp),
    h2: await listen(h2),
    grpc: grpcPort,
    ws: (wss.address() as AddressInfo).port,
  };
  process.send?.(ports);
}

/** p50 and p90 of `values`, after dropping the first `warm`. */
function stats(values: number[], warm: number): { p50: number; p90: number } {
  const v = values.slice(warm).sort((a, b) => a - b);
  return { p50: v[Math.floor(v.length * 0.5)], p90: v[Math.floor(v.length * 0.9)] };
}

const pause = () => new Promise((ok) => setTimeout(ok, 2));

async function measure(iterations: number, out: string): Promise<void> {
  const child = fork(__filename, ['--serve'], { execArgv: ['--import', 'tsx'] });
  const messages: unknown[] = [];
  const next = () => new Promise<unknown>((ok) => (messages.length ? ok(messages.shift()) : child.once('message', ok)));
  const ports = (await next()) as Ports;
  child.on('message', (m) => messages.push(m));
  const warm = Math.min(50, Math.floor(iterations / 4));
  const rows: { hop: string; p50: number; p90: number }[] = [];

  // TCP, one byte each way.
  {
    const socket = tcpConnect(ports.tcp, '127.0.0.1');
    socket.setNoDelay(true);
    await new Promise((ok) => socket.once('connect', ok));
    const there: number[] = [];
    const back: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const t0 = now();
      socket.write('x');
      const line = await new Promise<string>((ok) => socket.once('data', (d) => ok(d.toString())));
      const t1 = now();
      there.push(Number(line) - t0);
      back.push(t1 - Number(line));
      await pause();
    }
    socket.destroy();
    rows.push(
      { hop: 'TCP: client → server', ...stats(there, warm) },
      { hop: 'TCP: server → client', ...stats(back, warm) },
    );
  }

  // HTTP/2 POST with a 3 KB body (about what a 1.5k-token Generate request weighs).
  {
    const session = h2connect(`http://127.0.0.1:${ports.h2}`);
    const headers: number[] = [];
    const body: number[] = [];
    const back: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const t0 = now();
      const req = session.request({ ':method': 'POST', ':path': '/x' });
      req.end(Buffer.alloc(3000));
      let text = '';
      req.on('data', (d: Buffer) => (text += d.toString()));
      await new Promise((ok) => req.once('end', ok));
      const t1 = now();
      const r = JSON.parse(text) as { arrived: number; ended: number };
      headers.push(r.arrived - t0);
      body.push(r.ended - t0);
      back.push(t1 - r.ended);
      await pause();
    }
    session.close();
    rows.push(
      { hop: 'HTTP/2: request headers → server', ...stats(headers, warm) },
      { hop: 'HTTP/2: request body end → server', ...stats(body, warm) },
      { hop: 'HTTP/2: response → client', ...stats(back, warm) },
    );
  }

  // grpc-js Generate with a 1,500-token request, through the edge's channel options.
  {
    const client = new inferenceV1.InferenceServiceClient(
      `127.0.0.1:${ports.grpc}`,
      credentials.createInsecure(),
      DEFAULT_CHANNEL_OPTIONS,
    );
    const request: inferenceV1.GenerateRequest = {
      sessionKey: 's',
      parentSessionKey: '',
      cacheSalt: '',
      prefixLen: 0,
      tokens: Array.from({ length: 1500 }, (_, i) => (i * 7919) % 200_000),
      model: 'm',
      maxOutputTokens: 1,
      stopTokens: [],
    };
    const there: number[] = [];
    const back: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const t0 = now();
      const call = client.generate(request, { deadline: Date.now() + 5_000 });
      let firstChunk = 0;
      call.on('data', (m: inferenceV1.GenerateResponse) => {
        if (!firstChunk && m.event?.$case === 'chunk') firstChunk = now();
      });
      await new Promise((ok) => call.once('end', ok));
      const server = (await next()) as { arrived: number; written: number };
      there.push(server.arrived - t0);
      back.push(firstChunk - server.written);
      await pause();
    }
    rows.push(
      { hop: 'gRPC (grpc-js): Generate call → handler', ...stats(there, warm) },
      { hop: 'gRPC (grpc-js): chunk write → client', ...stats(back, warm) },
    );

    // The same call on the open GenerateStream (mux.proto), as the edge makes it by default.
    const muxClient = new MuxClient(() => client.generateStream());
    const muxThere: number[] = [];
    const muxBack: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const t0 = now();
      let firstChunk = 0;
      for await (const m of muxClient.stream(request, { deadlineMs: 5_000 })) {
        if (!firstChunk && m.event?.$case === 'chunk') firstChunk = now();
      }
      const server = (await next()) as { arrived: number; written: number };
      muxThere.push(server.arrived - t0);
      muxBack.push(firstChunk - server.written);
      await pause();
    }
    muxClient.close();
    client.close();
    rows.push(
      { hop: 'gRPC stream (mux): Generate start → handler', ...stats(muxThere, warm) },
      { hop: 'gRPC stream (mux): chunk write → client', ...stats(muxBack, warm) },
    );
  }

  // WebSocket text frame of 20 KB (a response.create with instructions and tools) and a small reply.
  {
    const ws = new WebSocket(`ws://127.0.0.1:${ports.ws}`, { perMessageDeflate: false });
    await new Promise((ok) => ws.once('open', ok));
    const frame = 'x'.repeat(20_000);
    const there: number[] = [];
    const back: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const t0 = now();
      ws.send(frame);
      const reply = await new Promise<string>((ok) => ws.once('message', (d: WebSocket.RawData) => ok(d.toString())));
      const t1 = now();
      there.push(Number(reply) - t0);
      back.push(t1 - Number(reply));
      await pause();
    }
    ws.close();
    rows.push(
      { hop: 'WebSocket: 20 KB frame → server', ...stats(there, warm) },
      { hop: 'WebSocket: small frame → client', ...stats(back, warm) },
    );
  }
  child.kill();

  const grpcSum = rows.filter((r) => r.hop.startsWith('gRPC (grpc-js)')).reduce((s, r) => s + r.p50, 0);
  const muxSum = rows.filter((r) => r.hop.startsWith('gRPC stream (mux)')).reduce((s, r) => s + r.p50, 0);
  const wsSum = rows.filter((r) => r.hop.startsWith('WebSocket')).reduce((s, r) => s + r.p50, 0);
  const h2Sum =
    (rows.find((r) => r.hop.includes('body end'))?.p50 ?? NaN) +
    (rows.find((r) => r.hop === 'HTTP/2: response → client')?.p50 ?? NaN);
  const cpu = cpus();
  const lines = [
    '# Transport floor (two processes, loopback)',
    '',
    `Run ${new Date().toISOString()} on ${cpu.length} × ${cpu[0]?.model.trim()}, Node ${process.version}, ${iterations} iterations per hop (first ${warm} dropped).`,
    '',
    '| hop | p50 (ms) | p90 (ms) |',
    '|---|---:|---:|',
    ...rows.map((r) => `| ${r.hop} | ${r.p50.toFixed(3)} | ${r.p90.toFixed(3)} |`),
    '',
    `A WebSocket turn crosses the client's WebSocket both ways and one Generate call to the worker and back: ` +
      `${wsSum.toFixed(2)} + ${grpcSum.toFixed(2)} = ${(wsSum + grpcSum).toFixed(2)} ms at p50 before the edge does any work. ` +
      `Raw HTTP/2 carries the same request and answer in ${h2Sum.toFixed(2)} ms, so ${(grpcSum - h2Sum).toFixed(2)} ms of it is grpc-js's own per-call work. ` +
      `On an open multiplexed stream (the edge's default, EDGE_GRPC_MUX) the same call takes ${muxSum.toFixed(2)} ms: ${(wsSum + muxSum).toFixed(2)} ms in all.`,
    '',
  ];
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'transport-floor.md'), lines.join('\n'));
  writeFileSync(
    join(out, 'transport-floor.json'),
    `${JSON.stringify({ generatedAt: new Date().toISOString(), iterations, rows, wsSum, grpcSum, muxSum, h2Sum }, null, 2)}\n`,
  );
  process.stdout.write(`${lines.join('\n')}\nwrote ${join(out, 'transport-floor')}.{md,json}\n`);
}

if (process.argv.includes('--serve')) void serve();
else {
  const at = process.argv.indexOf('--iterations');
  const outAt = process.argv.indexOf('--out');
  void measure(
    at > 0 ? Number(process.argv[at + 1]) : 400,
    outAt > 0 ? resolve(process.argv[outAt + 1]) : resolve(__dirname, '..', 'results'),
  );
}
