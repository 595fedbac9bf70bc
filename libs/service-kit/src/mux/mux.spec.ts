import { status as GrpcStatus, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { inferenceV1, safetyV1 } from '@fastloop/proto';
import { DomainError, toGrpcError } from '../grpc-errors';
import { createGrpcClient } from '../grpc-client';
import { startGrpcServer, type GrpcServer } from '../grpc-server';
import { createLogger } from '../logger';
import { KEEP_ON_CANCEL, MuxClient } from './mux-client';
import { MuxServer, type StreamingCall } from './mux-server';

const silent = createLogger({ service: 'test', level: 'silent' });
type GenCall = StreamingCall<inferenceV1.GenerateRequest, inferenceV1.GenerateResponse>;
const chunk = (token: number): inferenceV1.GenerateResponse => ({
  event: { $case: 'chunk', value: { tokens: [token], engineElapsedMs: 0, promptTokens: 0, cachedTokens: 0 } },
});
const tokenOf = (r: inferenceV1.GenerateResponse) => (r.event?.$case === 'chunk' ? r.event.value.tokens[0] : -1);
const request = (sessionKey: string, tokens: number[] = []): inferenceV1.GenerateRequest =>
  inferenceV1.GenerateRequest.fromPartial({ sessionKey, tokens, maxOutputTokens: tokens.length });
const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
};

/**
 * A worker whose GenerateStream calls behave per session key: 'count' streams `tokens` back one
 * chunk each, 'fail' fails with a domain error, 'hang' never answers (until cancelled).
 */
async function startWorker(withStream = true) {
  const mux = new MuxServer();
  const cancelled: string[] = [];
  /** Calls cancelled with `keep` (the caller goes on from them). */
  const kept: string[] = [];
  const streams = { opened: 0 };
  const handle = (call: GenCall) => {
    const key = call.request.sessionKey;
    call.on('cancelled', () => cancelled.push(key));
    call.on('cancelled', () => (call.keepOnCancel ? kept.push(key) : undefined));
    if (key === 'fail') {
      call.emit(
        'error',
        toGrpcError(new DomainError('prefix_miss', 'no such prefix', GrpcStatus.FAILED_PRECONDITION, true)),
      );
      return;
    }
    if (key === 'hang') return;
    let i = 0;
    const next = () => {
      if (call.cancelled) return;
      if (i === call.request.tokens.length) return call.end();
      call.write(chunk(call.request.tokens[i++]));
      setImmediate(next);
    };
    next();
  };
  const implementation: Partial<inferenceV1.InferenceServiceServer> = {
    generate: (call) => handle(call),
    forgetSession: (_call, cb) => cb(null, { forgotten: false }),
    ...(withStream
      ? {
          generateStream: (stream) => {
            streams.opened++;
            mux.serveStreaming<inferenceV1.GenerateRequest, inferenceV1.GenerateResponse>(stream, handle);
          },
        }
      : {}),
  };
  const server = await startGrpcServer({
    port: 0,
    logger: silent,
    services: [
      {
        name: 'fastloop.inference.v1.InferenceService',
        definition: inferenceV1.InferenceServiceService,
        implementation: implementation as UntypedServiceImplementation,
        drain: () => mux.drain(),
      },
    ],
  });
  const client = createGrpcClient(inferenceV1.InferenceServiceClient, `127.0.0.1:${server.port}`);
  return { server, client, mux, cancelled, kept, streams };
}

async function collect(it: AsyncIterable<inferenceV1.GenerateResponse>): Promise<number[]> {
  const out: number[] = [];
  for await (const r of it) out.push(tokenOf(r));
  return out;
}

describe('multiplexed streams (mux.proto) over real gRPC', () => {
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let mux: MuxClient<inferenceV1.GenerateRequest, inferenceV1.GenerateResponse>;
  beforeEach(async () => {
    worker = await startWorker();
    mux = new MuxClient(() => worker.client.generateStream(), { streams: 2 });
  });
  afterEach(async () => {
    mux.close();
    worker.client.close();
    await worker.server.close(1000);
  });

  it('runs concurrent streaming calls on a few streams, each getting only its own messages in order', async () => {
    const calls = Array.from({ length: 20 }, (_, i) => Array.from({ length: 5 + (i % 7) }, (_, j) => i * 100 + j));
    const results = await Promise.all(
      calls.map((tokens, i) => collect(mux.stream(request(`count-${i}`, tokens), { deadlineMs: 5000 }))),
    );
    expect(results).toEqual(calls);
    expect(mux.activeCalls).toBe(0);
  });

  it("fails a call with the peer's domain error, as a plain call would", async () => {
    await expect(collect(mux.stream(request('fail'), { deadlineMs: 5000 }))).rejects.toMatchObject({
      code: 'prefix_miss',
      retryable: true,
      grpcStatus: GrpcStatus.FAILED_PRECONDITION,
    });
    // The stream survives a failed call.
    expect(await collect(mux.stream(request('count', [7, 8]), { deadlineMs: 5000 }))).toEqual([7, 8]);
  });

  it('cancels in-band on abort and when the reader stops early; the server call sees it', async () => {
    const abort = new AbortController();
    const hung = collect(mux.stream(request('hang'), { deadlineMs: 5000, signal: abort.signal }));
    await until(() => mux.activeCalls === 1);
    abort.abort();
    await expect(hung).rejects.toMatchObject({ code: 'cancelled' });
    await until(() => worker.cancelled.includes('hang'));

    for await (const r of mux.stream(
      request(
        'count',
        Array.from({ length: 1000 }, (_, i) => i),
      ),
      { deadlineMs: 5000 },
    )) {
      expect(tokenOf(r)).toBe(0);
      break;
    }
    await until(() => worker.cancelled.includes('count'));
    expect(mux.activeCalls).toBe(0);
    expect(worker.kept).toEqual([]); // a plain cancel keeps nothing
  });

  it('tells the server to keep what a call built when it is aborted with KEEP_ON_CANCEL', async () => {
    const abort = new AbortController();
    const hung = collect(mux.stream(request('hang'), { deadlineMs: 5000, signal: abort.signal }));
    await until(() => mux.activeCalls === 1);
    abort.abort(KEEP_ON_CANCEL);
    await expect(hung).rejects.toMatchObject({ code: 'cancelled' });
    await until(() => worker.kept.includes('hang'));
  });

  it('fails at the deadline with deadline_exceeded and cancels the server call', async () => {
    await expect(collect(mux.stream(request('hang'), { deadlineMs: 50 }))).rejects.toMatchObject({
      code: 'deadline_exceeded',
      retryable: true,
    });
    await until(() => worker.cancelled.includes('hang'));
  });

  it('fails running calls with retryable unavailable when the stream breaks, and reopens for the next call', async () => {
    const hung = collect(mux.stream(request('hang'), { deadlineMs: 5000 }));
    await until(() => mux.activeCalls === 1);
    const port = worker.server.port;
    await worker.server.close(0); // force: the stream is torn down
    await expect(hung).rejects.toMatchObject({ code: 'unavailable', retryable: true });
    worker.client.close();
    worker = await startWorker();
    expect(port).toBeGreaterThan(0);
    const again = new MuxClient(() => worker.client.generateStream());
    expect(await collect(again.stream(request('count', [1]), { deadlineMs: 5000 }))).toEqual([1]);
    again.close();
  });

  it('lets a draining server finish running calls, then end the stream; new calls get retryable unavailable', async () => {
    const running = mux.stream(
      request(
        'count',
        Array.from({ length: 200 }, (_, i) => i),
      ),
      { deadlineMs: 5000 },
    );
    expect(tokenOf((await running.next()).value as inferenceV1.GenerateResponse)).toBe(0); // the server has the call
    worker.mux.drain();
    expect(await collect(running)).toHaveLength(199);
    await expect(collect(mux.stream(request('count', [1]), { deadlineMs: 5000 }))).rejects.toMatchObject({
      code: 'unavailable',
      retryable: true,
    });
  });

  it('takes no more calls on a stream whose server refused one as draining, so a retry opens another', async () => {
    const one = new MuxClient(() => worker.client.generateStream(), { streams: 1 });
    try {
      const hang = new AbortController();
      const running = one.stream(request('hang'), { deadlineMs: 5000, signal: hang.signal });
      const pending = running.next().catch(() => undefined); // keeps the stream busy
      await until(() => worker.streams.opened === 1);
      worker.mux.drain();
      await expect(collect(one.stream(request('count', [1]), { deadlineMs: 5000 }))).rejects.toMatchObject({
        code: 'unavailable',
      });
      // The retry goes out on a new stream (here to the same, still draining, server: refused again).
      await expect(collect(one.stream(request('count', [1]), { deadlineMs: 5000 }))).rejects.toMatchObject({
        code: 'unavailable',
      });
      expect(worker.streams.opened).toBe(2);
      hang.abort();
      await pending;
    } finally {
      one.close();
    }
  });

  it('holds the peer with flow control when the reader is slow, losing nothing', async () => {
    const slow = new MuxClient(() => worker.client.generateStream(), { highWaterMark: 4 });
    const tokens = Array.from({ length: 300 }, (_, i) => i);
    const got: number[] = [];
    for await (const r of slow.stream(request('count', tokens), { deadlineMs: 10_000 })) {
      got.push(tokenOf(r));
      if (got.length % 50 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    expect(got).toEqual(tokens);
    slow.close();
  });

  it('marks a peer without the stream method unsupported, so the caller can fall back', async () => {
    const old = await startWorker(false);
    const oldMux = new MuxClient(() => old.client.generateStream());
    try {
      await expect(collect(oldMux.stream(request('count', [1]), { deadlineMs: 5000 }))).rejects.toBeInstanceOf(
        DomainError,
      );
      expect(oldMux.unsupported).toBe(true);
    } finally {
      oldMux.close();
      old.client.close();
      await old.server.close(1000);
    }
  });
});

describe('a server stream past its bound of running calls', () => {
  it('refuses further calls with too_many_calls, retryable, and runs the rest', async () => {
    const mux = new MuxServer(2);
    const implementation: safetyV1.SafetyServiceServer = {
      moderateStream: (stream) => stream.end(),
      classify: (_call, cb) => cb(null, safetyV1.ClassifyResponse.fromPartial({})),
      classifyStream: (stream) =>
        mux.serveUnary(
          stream,
          () =>
            new Promise<safetyV1.ClassifyResponse>((ok) =>
              setTimeout(() => ok(safetyV1.ClassifyResponse.fromPartial({ itemsSeen: 1 })), 50),
            ),
        ),
    };
    const server = await startGrpcServer({
      port: 0,
      logger: silent,
      services: [{ name: 's', definition: safetyV1.SafetyServiceService, implementation, drain: () => mux.drain() }],
    });
    const client = createGrpcClient(safetyV1.SafetyServiceClient, `127.0.0.1:${server.port}`);
    const muxClient = new MuxClient(() => client.classifyStream());
    try {
      const calls = Array.from({ length: 3 }, () =>
        muxClient.unary(safetyV1.ClassifyRequest.fromPartial({}), { deadlineMs: 5000 }).then(
          (r) => r.itemsSeen,
          (e: DomainError) => e.code,
        ),
      );
      expect(await Promise.all(calls)).toEqual([1, 1, 'too_many_calls']);
    } finally {
      muxClient.close();
      client.close();
      await server.close(1000);
    }
  });
});

describe('unary calls on a multiplexed stream', () => {
  it('answers each call with its own response and maps errors', async () => {
    const mux = new MuxServer();
    const implementation: safetyV1.SafetyServiceServer = {
      moderateStream: (stream) => stream.end(),
      classify: (_call, cb) => cb(null, safetyV1.ClassifyResponse.fromPartial({})),
      classifyStream: (stream) =>
        mux.serveUnary(stream, async (req: safetyV1.ClassifyRequest) => {
          if (req.tenant === 'bad')
            throw new DomainError('invalid_safety_state', 'bad state', GrpcStatus.INVALID_ARGUMENT);
          return safetyV1.ClassifyResponse.fromPartial({ itemsSeen: req.items.length });
        }),
    };
    let server: GrpcServer | undefined;
    server = await startGrpcServer({
      port: 0,
      logger: silent,
      services: [{ name: 's', definition: safetyV1.SafetyServiceService, implementation, drain: () => mux.drain() }],
    });
    const client = createGrpcClient(safetyV1.SafetyServiceClient, `127.0.0.1:${server.port}`);
    const muxClient = new MuxClient(() => client.classifyStream(), { streams: 3 });
    try {
      const item = safetyV1.SafetyItem.fromPartial({ text: 'x' });
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          muxClient.unary(safetyV1.ClassifyRequest.fromPartial({ items: Array(i).fill(item) }), { deadlineMs: 5000 }),
        ),
      );
      expect(answers.map((a) => a.itemsSeen)).toEqual(Array.from({ length: 30 }, (_, i) => i));
      await expect(
        muxClient.unary(safetyV1.ClassifyRequest.fromPartial({ tenant: 'bad' }), { deadlineMs: 5000 }),
      ).rejects.toMatchObject({ code: 'invalid_safety_state', grpcStatus: GrpcStatus.INVALID_ARGUMENT });
      const abort = new AbortController();
      abort.abort();
      await expect(
        muxClient.unary(safetyV1.ClassifyRequest.fromPartial({}), { deadlineMs: 5000, signal: abort.signal }),
      ).rejects.toMatchObject({ code: 'cancelled' });
      // Closing the server ends its idle streams (drain): close() resolves by itself, long before
      // the 60 s grace period would force it (the test's 5 s timeout would fail first).
      await server.close(60_000);
      server = undefined;
    } finally {
      muxClient.close();
      client.close();
      await server?.close(0);
    }
  });
});

describe('one failing call on a shared stream', () => {
  it('fails only that call when its response is too large to send, or its handler throws', async () => {
    const measured: number[] = [];
    const mux = new MuxServer({
      messageBytes: (r: safetyV1.ClassifyResponse) => {
        measured.push(r.findings.length);
        return safetyV1.ClassifyResponse.encode(r).finish().length;
      },
      // Only a message this bound cannot place within the limit is measured.
      messageBytesAtMost: (r: safetyV1.ClassifyResponse) => 64 + r.findings.length * 400,
      maxMessageBytes: 10_000,
    });
    const finding = safetyV1.Finding.fromPartial({ ruleId: 'r', message: 'x'.repeat(100) });
    const implementation: safetyV1.SafetyServiceServer = {
      moderateStream: (stream) => stream.end(),
      classify: (_call, cb) => cb(null, safetyV1.ClassifyResponse.fromPartial({})),
      classifyStream: (stream) =>
        mux.serveUnary(stream, (req: safetyV1.ClassifyRequest) => {
          // Synchronous throw: not even a rejected promise.
          if (req.tenant === 'throws') throw new Error('handler bug');
          const findings = req.tenant === 'huge' ? Array(1_000).fill(finding) : [];
          return Promise.resolve(safetyV1.ClassifyResponse.fromPartial({ itemsSeen: req.items.length, findings }));
        }),
    };
    const server = await startGrpcServer({
      port: 0,
      logger: silent,
      services: [{ name: 's', definition: safetyV1.SafetyServiceService, implementation, drain: () => mux.drain() }],
    });
    const client = createGrpcClient(safetyV1.SafetyServiceClient, `127.0.0.1:${server.port}`);
    const muxClient = new MuxClient(() => client.classifyStream(), { streams: 1 });
    const call = (tenant: string, items = 0) =>
      muxClient.unary(
        safetyV1.ClassifyRequest.fromPartial({ tenant, items: Array(items).fill(safetyV1.SafetyItem.fromPartial({})) }),
        { deadlineMs: 5000 },
      );
    try {
      const [huge, throws, ...others] = await Promise.allSettled([
        call('huge'),
        call('throws'),
        ...Array.from({ length: 10 }, (_, i) => call('ok', i)),
      ]);
      expect(huge).toMatchObject({
        status: 'rejected',
        reason: { code: 'response_too_large', grpcStatus: GrpcStatus.RESOURCE_EXHAUSTED, retryable: false },
      });
      expect(throws).toMatchObject({ status: 'rejected', reason: { code: 'internal' } });
      expect(others.map((o) => (o.status === 'fulfilled' ? o.value.itemsSeen : -1))).toEqual(
        Array.from({ length: 10 }, (_, i) => i),
      );
      // The same stream still carries new calls.
      await expect(call('ok', 3)).resolves.toMatchObject({ itemsSeen: 3 });
      expect(measured).toEqual([1_000]);
    } finally {
      muxClient.close();
      client.close();
      await server.close(1_000);
    }
  });
});
