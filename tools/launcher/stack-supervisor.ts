import { join } from 'node:path';
import {
  describeWaiting,
  formatTail,
  spawnNodeService,
  waitForReady,
  type WaitingFor,
  type OwnedProcess,
  type ServiceExit,
} from '@fastloop/service-kit';
import type { ResolvedRedis } from './redis-setup';
import { RestartPolicy, type RestartPolicyOptions } from './restart-policy';
import {
  buildServiceEnv,
  expandInstances,
  instanceKind,
  portsOf,
  SERVICE_NAMES,
  STOP_ORDER,
  type InstanceName,
  type ServiceName,
  type StackPorts,
} from './service-specs';
import { startInOrder } from './start-order';
import { StackStartError } from './stack-errors';
import type { ResolvedStackOptions } from './stack-options';

/** A service that exited while the stack was up and not being stopped. */
export interface ServiceCrash {
  /** The process: a service, or an extra inference worker (`inference-1`, …). */
  readonly service: InstanceName;
  readonly exit: ServiceExit;
  /** Its last log lines, formatted. */
  readonly logTail: string;
  /** The same lines as written (pino JSON), oldest first. */
  readonly logLines: readonly string[];
  readonly logFile: string;
  /** How often it crashed within the restart window (1 when restarts are off). */
  readonly crashes: number;
}

/** A crashed service the supervisor is about to start again. */
export interface ServiceRestart {
  readonly service: InstanceName;
  readonly exit: ServiceExit;
  /** Its last log lines, formatted. */
  readonly logTail: string;
  readonly delayMs: number;
  /** 1 for the first restart within the window. */
  readonly attempt: number;
}

/** What a {@link StackSupervisor} runs. */
export interface SupervisorInputs {
  readonly opts: ResolvedStackOptions;
  readonly ports: StackPorts;
  readonly redis: ResolvedRedis;
  readonly apiKeys: string;
  /** Host the admin ports are probed on. */
  readonly host: string;
  readonly logDir: string;
  readonly onLogLine?: (service: InstanceName, line: string) => void;
  /** Told what a starting service waits for, when its /readyz says. */
  readonly onWaiting?: (service: InstanceName, waiting: readonly WaitingFor[]) => void;
  /** Restart a service that crashes while the stack is up; default: never (the crash ends the stack). */
  readonly restart?: RestartPolicyOptions;
  /** Told about each restart before it happens (the launcher logs it). */
  readonly onRestart?: (restart: ServiceRestart) => void;
}

/**
 * Owns the service processes of one stack through `starting → up → stopping`. An exit while
 * starting fails the start; an exit while up restarts the service with backoff (when a restart
 * policy is given) until it crash-loops, which is reported on `crashed`; exits while stopping are
 * expected. A process `exit` hook SIGKILLs whatever is left if the host process ends first.
 */
export class StackSupervisor {
  /** Resolves on the first unexpected exit after start; never rejects. */
  readonly crashed: Promise<ServiceCrash>;
  readonly procs = new Map<InstanceName, OwnedProcess>();
  private state: 'starting' | 'up' | 'stopping' = 'starting';
  private diedWhileStarting: OwnedProcess | undefined;
  private readonly startAbort = new AbortController();
  private reportCrash: (crash: ServiceCrash) => void = () => undefined;
  private stopping: Promise<Readonly<Record<ServiceName, ServiceExit>>> | undefined;
  private readonly onProcessExit = () => this.kill();
  private readonly restarts = new Map<InstanceName, RestartPolicy>();
  /** Processes stopped on purpose while the stack is up (a test killing a worker): not crashes. */
  private readonly intentional = new Set<InstanceName>();
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  /** What each starting service last said it waits for (its /readyz). */
  private readonly waiting = new Map<InstanceName, readonly WaitingFor[]>();

  constructor(private readonly inputs: SupervisorInputs) {
    this.crashed = new Promise<ServiceCrash>((resolve) => (this.reportCrash = resolve));
    process.on('exit', this.onProcessExit);
  }

  /**
   * Starts every process once what its service starts after (`startAfter`) is ready, the others at
   * once, and waits for all of them to answer /readyz before one shared deadline. Rejects with
   * StackStartError after stopping everything.
   */
  async start(startAfter: Readonly<Record<ServiceName, readonly ServiceName[]>>, signal?: AbortSignal): Promise<void> {
    const onAbort = () => this.startAbort.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    // One deadline for the whole stack: a test cares how long start takes, not how it splits.
    const deadline = Date.now() + this.inputs.opts.readyTimeoutMs;
    const all = expandInstances(SERVICE_NAMES, this.inputs.opts.workers);
    const after = (name: InstanceName) =>
      all.filter((other) => startAfter[instanceKind(name).service].includes(instanceKind(other).service));
    try {
      const outcomes = await startInOrder(
        all,
        after,
        (name) => {
          this.spawn(name);
          return waitForReady({
            url: `http://${this.inputs.host}:${portsOf(this.inputs.ports, name).admin}/readyz`,
            deadline,
            signal: this.startAbort.signal,
            onWaiting: (waiting) => {
              this.waiting.set(name, waiting);
              this.inputs.onWaiting?.(name, waiting);
            },
          });
        },
        (outcome) => outcome === 'ready',
      );
      const failed = [...outcomes].filter(([, o]) => o !== 'ready' && o !== 'skipped');
      if (failed.length > 0) throw await this.startFailure(failed[0][0], signal?.aborted === true);
      this.state = 'up';
    } catch (err) {
      await this.stop(Math.min(this.inputs.opts.stopTimeoutMs, 5_000));
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** SIGTERM one by one in STOP_ORDER, SIGKILL after `timeoutMs` each, then the private Redis. Idempotent. */
  stop(timeoutMs: number): Promise<Readonly<Record<ServiceName, ServiceExit>>> {
    this.state = 'stopping';
    this.clearRestartTimers();
    this.stopping ??= (async () => {
      const exits = {} as Record<ServiceName, ServiceExit>;
      for (const name of STOP_ORDER) {
        // Every worker drains at once: they hold no state for each other.
        const instances = expandInstances([name], this.inputs.opts.workers);
        const stopped = await Promise.all(instances.map((i) => this.procs.get(i)?.stop(timeoutMs)));
        if (stopped[0]) exits[name] = stopped[0];
      }
      await this.inputs.redis.local?.stop();
      process.off('exit', this.onProcessExit);
      return exits;
    })();
    return this.stopping;
  }

  /** SIGKILL every service and SIGTERM the private Redis, synchronously. */
  kill(): void {
    this.state = 'stopping';
    this.clearRestartTimers();
    this.procs.forEach((p) => p.killNow());
    void this.inputs.redis.local?.stop(); // its SIGTERM is sent synchronously inside stop()
  }

  /** The last `lines` lines of one service, or of every started one, formatted. */
  tail(service: InstanceName | undefined, lines: number): string {
    const names = service
      ? [service]
      : expandInstances(SERVICE_NAMES, this.inputs.opts.workers).filter((n) => this.procs.has(n));
    return names
      .map((name) => this.procs.get(name))
      .filter((p): p is OwnedProcess => p !== undefined)
      .map((p) => formatTail(p.name, p.tail(lines), p.logFile))
      .join('\n');
  }

  /** Where a service's stdout+stderr go. */
  logFile(name: InstanceName): string {
    return join(this.inputs.logDir, `${name}.log`);
  }

  /**
   * Stops one process on purpose while the stack is up (SIGTERM: it drains; SIGKILL: it dies at
   * once), so its exit is not taken for a crash. For tests of failover and drain.
   */
  async stopInstance(name: InstanceName, signal: 'SIGTERM' | 'SIGKILL', timeoutMs: number): Promise<ServiceExit> {
    const proc = this.procs.get(name);
    if (!proc) throw new Error(`no process named ${name} in this stack`);
    this.intentional.add(name);
    if (signal === 'SIGKILL') proc.killNow();
    return signal === 'SIGKILL' ? proc.exited : proc.stop(timeoutMs);
  }

  private spawn(name: InstanceName): void {
    const { opts, ports, redis, apiKeys, onLogLine } = this.inputs;
    const logFile = this.logFile(name);
    const proc = spawnNodeService({
      name,
      entry: opts.entries[instanceKind(name).service],
      cwd: opts.rootDir,
      env: buildServiceEnv(name, {
        base: opts.base,
        ports,
        redisUrl: redis.url,
        logLevel: opts.logLevel,
        bindHost: opts.bindHost,
        apiKeys,
        workers: opts.workers,
      }),
      logFile,
      onLine: onLogLine && ((line) => onLogLine(name, line)),
    });
    this.procs.set(name, proc);
    void proc.exited.then((exit) => {
      if (this.state === 'starting') {
        this.diedWhileStarting ??= proc;
        this.startAbort.abort();
      } else if (this.state === 'up' && !this.intentional.has(name)) {
        this.onCrash(name, proc, exit, logFile);
      }
    });
  }

  /** Restarts the service after its backoff, or ends the stack once it crash-loops. */
  private onCrash(name: InstanceName, proc: OwnedProcess, exit: ServiceExit, logFile: string): void {
    const logLines = proc.tail();
    const logTail = formatTail(name, logLines, logFile);
    let policy = this.restarts.get(name);
    if (!policy) this.restarts.set(name, (policy = new RestartPolicy(this.inputs.restart ?? { maxRestarts: 0 })));
    const decision = policy.onCrash(Date.now());
    if (!decision.restart) {
      this.reportCrash({ service: name, exit, logTail, logLines, logFile, crashes: decision.crashes });
      return;
    }
    this.inputs.onRestart?.({ service: name, exit, logTail, delayMs: decision.delayMs, attempt: decision.attempt });
    const timer = setTimeout(() => {
      this.restartTimers.delete(timer);
      if (this.state === 'up') this.spawn(name);
    }, decision.delayMs);
    this.restartTimers.add(timer);
  }

  private clearRestartTimers(): void {
    this.restartTimers.forEach((t) => clearTimeout(t));
    this.restartTimers.clear();
  }

  /** The error for a service that did not become ready, naming it and quoting its log. */
  private async startFailure(name: InstanceName, callerAborted: boolean): Promise<StackStartError> {
    const died = this.diedWhileStarting;
    if (died) {
      const exit = await died.exited; // flushed, so the tail holds its last words
      const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
      const diedName = died.name as InstanceName;
      const logLines = died.tail();
      // Node's and grpc-js's bind errors both name the errno; the services log them as they die.
      const lostPort = logLines.some((line) => line.includes('EADDRINUSE'));
      return new StackStartError(
        lostPort ? 'address_in_use' : 'service_exited',
        `${diedName} ${how} before the stack was ready${lostPort ? ': a port it was given was taken (EADDRINUSE)' : ''}`,
        { service: diedName, logLines, logFile: died.logFile },
      );
    }
    if (callerAborted) return new StackStartError('aborted', 'start was aborted');
    const proc = this.procs.get(name);
    const waiting = this.waiting.get(name) ?? [];
    const why =
      waiting.length > 0 ? `: it was waiting for ${describeWaiting(waiting)}` : ' (its /readyz never answered 200)';
    return new StackStartError(
      'ready_timeout',
      `${name} was not ready within ${this.inputs.opts.readyTimeoutMs} ms${why}`,
      {
        service: name,
        logLines: proc?.tail() ?? [],
        logFile: proc?.logFile,
      },
    );
  }
}
