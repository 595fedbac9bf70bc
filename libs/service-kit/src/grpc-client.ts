import {
  credentials,
  Metadata,
  type CallOptions,
  type Client,
  type ChannelOptions,
  type ClientOptions,
  type ServiceError,
} from '@grpc/grpc-js';
import { fromGrpcError } from './grpc-errors';
import { internalAuthClientInterceptor } from './internal-auth';

/**
 * Channel options every internal client uses: keepalive so dead peers are noticed between turns,
 * and round_robin so a name that resolves to several pods (a headless Service) spreads calls over
 * all of them instead of pinning one HTTP/2 connection to the first.
 */
export const DEFAULT_CHANNEL_OPTIONS: ChannelOptions = {
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
};

type ClientCtor<C> = new (
  address: string,
  creds: ReturnType<typeof credentials.createInsecure>,
  options?: Partial<ClientOptions>,
) => C;

/**
 * Creates an insecure (in-cluster) client for a generated ts-proto service. With `internalToken`
 * (FASTLOOP_INTERNAL_TOKEN) every call carries it, as safety, router and inference require.
 */
export function createGrpcClient<C extends Client>(
  ctor: ClientCtor<C>,
  address: string,
  options: ChannelOptions = {},
  internalToken?: string,
): C {
  const interceptors = internalToken ? [internalAuthClientInterceptor(internalToken)] : [];
  return new ctor(address, credentials.createInsecure(), { ...DEFAULT_CHANNEL_OPTIONS, ...options, interceptors });
}

export interface CallSettings {
  /** Deadline for the call in ms (every call has one). */
  deadlineMs: number;
  /** Cancels the call when aborted. */
  signal?: AbortSignal;
}

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => { cancel(): void };

/** Calls a unary method with a deadline and abort signal; failures become DomainErrors. */
export function callUnary<Req, Res>(
  method: UnaryMethod<Req, Res>,
  thisArg: Client,
  request: Req,
  settings: CallSettings,
): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    const call = method.call(
      thisArg,
      request,
      new Metadata(),
      { deadline: Date.now() + settings.deadlineMs },
      (err, res) => {
        settings.signal?.removeEventListener('abort', onAbort);
        if (err) reject(fromGrpcError(err));
        else resolve(res);
      },
    );
    const onAbort = () => call.cancel();
    settings.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves when the client's channel is connected, or rejects after `timeoutMs`. */
export function waitForClientReady(client: Client, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    client.waitForReady(Date.now() + timeoutMs, (err) => (err ? reject(err) : resolve()));
  });
}
