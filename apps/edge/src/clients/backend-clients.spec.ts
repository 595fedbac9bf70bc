import { status as GrpcStatus, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { inferenceV1, routerV1, safetyV1 } from '@fastloop/proto';
import {
  createLogger,
  DomainError,
  ErrorCode,
  MuxServer,
  startGrpcServer,
  toGrpcError,
  type GrpcServer,
  KEEP_ON_CANCEL,
  type InternalErrorCode,
  type StreamingCall,
} from '@fastloop/service-kit';
import { BackendClients } from './backend-clients';

const silent = createLogger({ service: 'test', level: 'silent' });
type GenCall = StreamingCall<inferenceV1.GenerateRequest, inferenceV1.GenerateResponse>;
/** Per cancelled `hold` call (one chunk, then it waits): whether its caller let the worker keep the session. */
const kept: boolean[] = [];

/** Safety, a router and a worker on one real gRPC server, with or without the multiplexed stream methods. */
async function startPeers(
  withStreams: boolean,
): Promise<{ server: GrpcServer; calls: { plain: number; muxed: number } }> {
  const calls = { plain: 0, muxed: 0 };
  const mux = new MuxServer();
  const classify = async (req: safetyV1.ClassifyRequest) =>
    safetyV1.ClassifyResponse.fromPartial({ itemsSeen: req.items.length });
  const generate = (call: GenCall) => {
    if (call.request.sessionKey === 'miss') {
      call.emit(
        'error',
        toGrpcError(new DomainError('prefix_miss', 'no prefix', GrpcStatus.FAILED_PRECONDITION, true)),
      );
      return;
    }
    if (call.request.sessionKey === 'hold') {
      call.on('cancelled', () => kept.push((call as { keepOnCancel?: boolean }).keepOnCancel === true));
      call.write({
        event: { $case: 'chunk', value: { tokens: [1], engineElapsedMs: 1, promptTokens: 0, cachedTokens: 0 } },
      });
      return;
    }
    for (const t of call.request.tokens)
      call.write({
        event: { $case: 'chunk', value: { tokens: [t], engineElapsedMs: 1, promptTokens: 0, cachedTokens: 0 } },
      });
    call.end();
  };
  const safety: Partial<safetyV1.SafetyServiceServer> = {
    classify: (call, cb) => {
      calls.plain++;
      void classify(call.request).then((r) => cb(null, r));
    },
    ...(withStreams
      ? {
          classifyStream: (stream) =>
            mux.serveUnary(stream, (r: safetyV1.ClassifyRequest) => (calls.muxed++, classify(r))),
        }
      : {}),
  };
  const inference: Partial<inferenceV1.InferenceServiceServer> = {
    generate: (call) => (calls.plain++, generate(call)),
    forgetSession: (_c, cb) => cb(null, { forgotten: false }),
    ...(withStreams
      ? {
          generateStream: (stream) =>
            mux.serveStreaming<inferenceV1.GenerateRequest, inferenceV1.GenerateResponse>(
              stream,
              (c) => (calls.muxed++, generate(c)),
            ),
        }
      : {}),
  };
  const route = async (req: routerV1.RouteRequest) => routerV1.RouteResponse.fromPartial({ model: req.model });
  const router: Partial<routerV1.RouterServiceServer> = {
    route: (call, cb) => {
      calls.plain++;
      void route(call.request).then((r) => cb(null, r));
    },
    ...(withStreams
      ? { routeStream: (stream) => mux.serveUnary(stream, (r: routerV1.RouteRequest) => (calls.muxed++, route(r))) }
      : {}),
  };
  const server = await startGrpcServer({
    port: 0,
    logger: silent,
    services: [
      {
        name: 'fastloop.safety.v1.SafetyService',
        definition: safetyV1.SafetyServiceService,
        implementation: safety as UntypedServiceImplementation,
        drain: () => mux.drain(),
      },
      {
        name: 'fastloop.router.v1.RouterService',
        definition: routerV1.RouterServiceService,
        implementation: router as UntypedServiceImplementation,
      },
      {
        name: 'fastloop.inference.v1.InferenceService',
        definition: inferenceV1.InferenceServiceService,
        implementation: inference as UntypedServiceImplementation,
      },
    ],
  });
  return { server, calls };
}

async function exercise(backends: BackendClients, address: string): Promise<void> {
  const item = safetyV1.SafetyItem.fromPartial({ text: 'x' });
  expect((await backends.classify(safetyV1.ClassifyRequest.fromPartial({ items: [item, item] }))).itemsSeen).toBe(2);
  expect((await backends.route(routerV1.RouteRequest.fromPartial({ model: 'm-1' }))).model).toBe('m-1');
  const tokens: number[] = [];
  for await (const r of backends.generate(
    address,
    inferenceV1.GenerateRequest.fromPartial({ sessionKey: 's', tokens: [5, 6, 7] }),
  )) {
    if (r.event?.$case === 'chunk') tokens.push(...r.event.value.tokens);
  }
  expect(tokens).toEqual([5, 6, 7]);
  const miss = async () => {
    for await (const r of backends.generate(address, inferenceV1.GenerateRequest.fromPartial({ sessionKey: 'miss' })))
      void r;
  };
  await expect(miss()).rejects.toMatchObject({ code: 'prefix_miss', retryable: true });
}

describe('BackendClients', () => {
  const options = (address: string) => ({
    safetyAddress: address,
    routerAddress: address,
    safetyTimeoutMs: 5000,
    routerTimeoutMs: 5000,
    inferenceTimeoutMs: 5000,
    inferenceIdleTimeoutMs: 5000,
    mux: true,
  });

  it('runs Classify, Route and Generate on the multiplexed streams when the peers have them', async () => {
    const { server, calls } = await startPeers(true);
    const address = `127.0.0.1:${server.port}`;
    const backends = new BackendClients(options(address));
    try {
      await exercise(backends, address);
      expect(calls).toEqual({ plain: 0, muxed: 4 });
    } finally {
      backends.close();
      await server.close(1000);
    }
  });

  it('falls back to plain calls for peers from before the streams', async () => {
    const { server, calls } = await startPeers(false);
    const address = `127.0.0.1:${server.port}`;
    const backends = new BackendClients(options(address));
    try {
      await exercise(backends, address);
      await exercise(backends, address);
      expect(calls).toEqual({ plain: 8, muxed: 0 });
    } finally {
      backends.close();
      await server.close(1000);
    }
  });
  it('passes the reason its caller cancels a Generate call with on to the worker: KEEP_ON_CANCEL keeps the session', async () => {
    const { server } = await startPeers(true);
    const address = `127.0.0.1:${server.port}`;
    const backends = new BackendClients(options(address));
    const cancelWith = async (reason?: string) => {
      const abort = new AbortController();
      const request = inferenceV1.GenerateRequest.fromPartial({ sessionKey: 'hold', tokens: [1] });
      for await (const r of backends.generate(address, request, abort.signal)) if (r) abort.abort(reason);
    };
    try {
      await expect(cancelWith(KEEP_ON_CANCEL)).rejects.toMatchObject({ code: 'cancelled' });
      await expect(cancelWith()).rejects.toMatchObject({ code: 'cancelled' });
      for (let i = 0; i < 100 && kept.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      expect(kept).toEqual([true, false]);
    } finally {
      backends.close();
      await server.close(1000);
    }
  });

  it('sends a Classify again (3 times at most) when a safety replica answers unavailable, and nothing else twice', async () => {
    let calls = 0;
    let failing: InternalErrorCode[] = [];
    const safety: Partial<safetyV1.SafetyServiceServer> = {
      classify: (call, cb) => {
        calls++;
        const code = failing.shift();
        if (code)
          return cb(
            toGrpcError(new DomainError(code, 'no', GrpcStatus.UNAVAILABLE, code === ErrorCode.unavailable)) as never,
            null,
          );
        cb(null, safetyV1.ClassifyResponse.fromPartial({ itemsSeen: call.request.items.length }));
      },
    };
    const server = await startGrpcServer({
      port: 0,
      logger: silent,
      services: [
        {
          name: 'fastloop.safety.v1.SafetyService',
          definition: safetyV1.SafetyServiceService,
          implementation: safety as UntypedServiceImplementation,
        },
      ],
    });
    const backends = new BackendClients({ ...options(`127.0.0.1:${server.port}`), mux: false });
    const request = safetyV1.ClassifyRequest.fromPartial({ items: [safetyV1.SafetyItem.fromPartial({ text: 'x' })] });
    const run = async (fail: InternalErrorCode[]) => {
      failing = fail;
      calls = 0;
      const outcome = await backends.classify(request).then(
        (r) => r.itemsSeen,
        (err: { code: string }) => err.code,
      );
      return { outcome, calls };
    };
    try {
      expect(await run([ErrorCode.unavailable, ErrorCode.unavailable, ErrorCode.unavailable])).toEqual({
        outcome: 1,
        calls: 4,
      });
      expect(
        await run([ErrorCode.unavailable, ErrorCode.unavailable, ErrorCode.unavailable, ErrorCode.unavailable]),
      ).toEqual({
        outcome: 'unavailable',
        calls: 4,
      });
      expect(await run([ErrorCode.internal])).toEqual({ outcome: 'internal', calls: 1 });
    } finally {
      backends.close();
      await server.close(1000);
    }
  });
});
