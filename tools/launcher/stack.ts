import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { relative } from 'node:path';
import { freshLogDir } from './log-dirs';
import { resolveRedis, type ResolvedRedis } from './redis-setup';
import { getFreePort, type ServiceExit } from '@fastloop/service-kit';
import {
  allocatePorts,
  internalTokenOf,
  instanceKind,
  portsOf,
  probeHost,
  resolveApiKeys,
  SERVICE_NAMES,
  START_AFTER,
  workerId,
  workerInstance,
  type InstanceName,
  type ServiceName,
  type ServicePorts,
} from './service-specs';
import { StackStartError } from './stack-errors';
import {
  resolveStackOptions,
  SERVICE_BUNDLES_ENV,
  type ResolvedStackOptions,
  type StackOptions,
} from './stack-options';
import { StackSupervisor, type ServiceCrash } from './stack-supervisor';

/** How often startStack starts afresh when a service lost the race for one of its picked ports. */
const START_ATTEMPTS = 3;

export { StackStartError, type StackStartErrorCode } from './stack-errors';
export { startInOrder } from './start-order';
export type { StackOptions } from './stack-options';
export type { ServiceExit } from '@fastloop/service-kit';
export type { ServiceCrash, ServiceRestart } from './stack-supervisor';
export type { RestartPolicyOptions } from './restart-policy';
export { modelStack, ModelOptionError, type ModelStack } from './model-option';
export {
  SERVICE_NAMES,
  START_AFTER,
  STOP_ORDER,
  DEV_API_KEY,
  allocatePorts,
  buildServiceEnv,
  type ServiceName,
  type ServicePorts,
  type StackPorts,
  type InstanceName,
} from './service-specs';

/** One running service of a {@link Stack}. */
export interface ServiceInfo {
  readonly pid: number;
  /** `admin` (/healthz, /readyz, /metrics), plus `grpc` and/or `http` as the service has them. */
  readonly ports: ServicePorts;
  /** Its stdout+stderr (pino JSON lines). */
  readonly logFile: string;
}

/** A running fastloop stack: five services, each of which answered 200 on /readyz. */
export interface Stack {
  /** The edge's HTTP base, `http://127.0.0.1:<port>` (the OpenAI SDK's baseURL is `${url}/v1`). */
  readonly url: string;
  /** The WebSocket-mode endpoint, `ws://127.0.0.1:<port>/v1/responses`. */
  readonly wsUrl: string;
  /** The edge's gRPC bidi (`fastloop.responses.v1`) address, `127.0.0.1:<EDGE_GRPC_PORT>`. */
  readonly grpcAddress: string;
  /** The public port actually bound (useful with `port: 0`). */
  readonly port: number;
  /** A key the edge accepts: the first of FASTLOOP_API_KEYS, else `sk-fastloop-dev`. */
  readonly apiKey: string;
  readonly redisUrl: string;
  /** Where the Redis came from: `option` (redisUrl), `env` (REDIS_URL) or `local` (the stack's own, started for it). */
  readonly redisSource: ResolvedRedis['source'];
  /** Where `<service>.log` files are. */
  readonly logDir: string;
  /** FASTLOOP_INTERNAL_TOKEN of this stack's services (what an internal caller, e.g. of billing's report, must send). */
  readonly internalToken: string;
  readonly services: Readonly<Record<ServiceName, ServiceInfo>>;
  /** Every inference worker (`services.inference` is the first), as the router lists them. */
  readonly workers: readonly WorkerInfo[];
  /**
   * Resolves if a service exits on its own while the stack is up and is not restarted (restarts off,
   * or it crash-looped); never rejects. A restarted service gets a new pid; `services` keeps the first.
   */
  readonly crashed: Promise<ServiceCrash>;
  /** The last `lines` (default 40) log lines of one service, or of all, formatted for a failure message. */
  tail(service?: InstanceName, lines?: number): string;
  /**
   * SIGTERMs the services one at a time in STOP_ORDER (edge first, so it drains and flushes while
   * its upstreams still answer), SIGKILLs any that outlive `stopTimeoutMs`, then stops the Redis it
   * started. Idempotent; resolves with how each service exited.
   */
  stop(): Promise<Readonly<Record<ServiceName, ServiceExit>>>;
  /** SIGKILLs everything now, synchronously (a second Ctrl-C). A later stop() still resolves. */
  kill(): void;
}

/** One inference worker of a {@link Stack}. */
export interface WorkerInfo extends ServiceInfo {
  /** Its id in the router's INFERENCE_WORKERS (`sim-0`, `sim-1`, …). */
  readonly id: string;
  /** Its process name in logs (`inference`, `inference-1`, …). */
  readonly instance: InstanceName;
  /**
   * Stops it on purpose while the stack runs, which the stack does not count as a crash: SIGTERM
   * (it drains: NOT_SERVING, finishes its calls) or SIGKILL (it dies at once). For failover tests.
   */
  stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<ServiceExit>;
}

/**
 * Starts the stack on free internal ports: every service at once but the router, which starts
 * once the inference workers are ready (START_AFTER); resolves when every service's /readyz says so. A
 * service that loses one of its picked ports to another process (EADDRINUSE) makes it start again on
 * new ports, up to START_ATTEMPTS tries. Rejects with {@link StackStartError}
 * (after stopping whatever it started) or with service-kit's RedisNotInstalledError. Installs no
 * signal handlers; it adds a process `exit` hook that SIGKILLs the services, removed by stop().
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const opts = resolveStackOptions(options);
  for (const name of SERVICE_NAMES) {
    if (!existsSync(opts.entries[name])) {
      // A bundle (FASTLOOP_SERVICE_BUNDLES) is missing until the bundles are built.
      const hint =
        options.entries?.[name] === undefined && opts.entries[name].endsWith('.js')
          ? ` (${SERVICE_BUNDLES_ENV}: build the bundles first, \`node deploy/build-bundles.mjs\`)`
          : '';
      throw new StackStartError(
        'entry_missing',
        `${name}: entry file ${relative(opts.rootDir, opts.entries[name])} does not exist${hint}`,
        { service: name },
      );
    }
  }
  const logDir = options.logDir ?? freshLogDir();
  mkdirSync(logDir, { recursive: true });
  // Internal ports are picked free, then bound by another process: something else on the machine
  // (another stack, a test) can take one in between. That is a race, not a fault: start again on
  // new ports. A real conflict (a fixed PORT taken) is caught by ensurePortFree on the next try.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts, options, logDir);
    } catch (err) {
      const raced = err instanceof StackStartError && err.code === 'address_in_use';
      if (!raced || attempt >= START_ATTEMPTS || options.signal?.aborted) throw err;
      options.onPortRace?.(err);
    }
  }
}

/** Starts on one try's ports, each call picking them afresh. */
async function startOnce(opts: ResolvedStackOptions, options: StackOptions, logDir: string): Promise<Stack> {
  const port = opts.port === 0 ? await getFreePort() : await ensurePortFree(opts.port, opts.bindHost);
  const ports = await allocatePorts(port, undefined, opts.workers);
  const redis = await resolveRedis({
    redisUrl: options.redisUrl,
    envUrl: opts.base.REDIS_URL,
    dataDir: options.redisDataDir,
  });
  let supervisor: StackSupervisor | undefined;
  try {
    const apiKeys = resolveApiKeys(opts.base);
    const host = probeHost(opts.bindHost);
    supervisor = new StackSupervisor({
      opts,
      ports,
      redis,
      apiKeys: apiKeys.keys,
      host,
      logDir,
      onLogLine: options.onLogLine,
      onWaiting: options.onWaiting,
      restart: options.restart,
      onRestart: options.onRestart,
    });
    await supervisor.start(START_AFTER, options.signal);
    const sup = supervisor;
    const services = {} as Record<ServiceName, ServiceInfo>;
    const info = (name: InstanceName): ServiceInfo => ({
      pid: sup.procs.get(name)!.pid,
      ports: portsOf(ports, name),
      logFile: sup.logFile(name),
    });
    for (const name of SERVICE_NAMES) services[name] = info(name);
    const workers = Array.from({ length: opts.workers }, (_, i): WorkerInfo => {
      const instance = workerInstance(i);
      return {
        ...info(instance),
        id: workerId(i),
        instance,
        stop: (signal) => sup.stopInstance(instance, signal, opts.stopTimeoutMs),
      };
    });
    return {
      url: `http://${host}:${port}`,
      wsUrl: `ws://${host}:${port}/v1/responses`,
      grpcAddress: `${host}:${ports.edge.grpc}`,
      port,
      apiKey: apiKeys.first,
      redisUrl: redis.url,
      redisSource: redis.source,
      logDir,
      internalToken: internalTokenOf(opts.base),
      services,
      workers,
      crashed: sup.crashed,
      tail: (service, lines = 40) => sup.tail(service, lines),
      stop: () => sup.stop(opts.stopTimeoutMs),
      kill: () => sup.kill(),
    };
  } catch (err) {
    await (supervisor ? supervisor.stop(5_000) : redis.local?.stop());
    throw err;
  }
}

/** Fails early, with advice, when the public port is taken (rather than quoting the edge's EADDRINUSE). */
function ensurePortFree(port: number, bindHost: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EADDRINUSE') return resolve(port); // anything else the edge reports itself
      reject(
        new StackStartError(
          'port_in_use',
          `port ${port} is already in use on ${bindHost}: stop what holds it, or set PORT to another port (PORT=0 picks a free one)`,
          {
            cause: err,
          },
        ),
      );
    });
    srv.listen(port, bindHost, () => srv.close(() => resolve(port)));
  });
}

/**
 * For tests: runs `fn`; if it throws, or a service dies meanwhile, writes every service's last
 * `lines` log lines to stderr (outside Jest's console buffering) and fails with the original error.
 */
export async function withStackLogs<T>(stack: Stack, fn: () => Promise<T>, lines = 40): Promise<T> {
  const crash = stack.crashed.then((c): never => {
    const how = c.exit.signal ? `was killed by ${c.exit.signal}` : `exited with code ${c.exit.code}`;
    throw new Error(`${c.service} ${how} during the test`);
  });
  crash.catch(() => undefined); // only observed through the race below
  try {
    return await Promise.race([fn(), crash]);
  } catch (err) {
    process.stderr.write(
      `\nfastloop service logs (last ${lines} lines each; full logs in ${stack.logDir}):\n${stack.tail(undefined, lines)}\n`,
    );
    throw err;
  }
}
