import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { LineTail } from './log-lines';

/** How a service process ended. */
export interface ServiceExit {
  /** Exit code, or null when a signal ended it. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** True when the launcher had to SIGKILL it after its stop timeout. */
  readonly forced: boolean;
}

/** Options for {@link spawnService}. */
export interface SpawnServiceOptions {
  readonly name: string;
  /** Absolute path of the TypeScript entry file. */
  readonly entry: string;
  /** Working directory; the repository root, so tsx finds tsconfig.json and its `paths`. */
  readonly cwd: string;
  readonly env: Record<string, string>;
  /** stdout and stderr both go here (truncated at start). */
  readonly logFile: string;
  /** Called for every complete output line, e.g. to echo it to a terminal. */
  readonly onLine?: (line: string) => void;
}

/**
 * One running service: its output goes to a log file and a bounded in-memory tail; `stop()` is
 * SIGTERM, then SIGKILL after a timeout, and is safe to call twice.
 */
export class ServiceProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves once the process has exited and its output is flushed to the log file. */
  readonly exited: Promise<ServiceExit>;
  private exit: ServiceExit | undefined;
  private forced = false;
  private stopping: Promise<ServiceExit> | undefined;
  private readonly tailLines = new LineTail();

  constructor(
    private readonly child: ChildProcess,
    options: SpawnServiceOptions,
  ) {
    this.name = options.name;
    this.pid = child.pid ?? -1;
    this.logFile = options.logFile;
    const file: WriteStream = createWriteStream(options.logFile, { flags: 'w' });
    file.on('error', () => undefined); // a full disk must not crash the launcher; the tail still works
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        file.write(chunk);
        this.tailLines.push(chunk, options.onLine);
      });
    }
    this.exited = new Promise<ServiceExit>((resolve) => {
      const finish = (code: number | null, signal: NodeJS.Signals | null) => {
        if (this.exit) return;
        this.tailLines.end(options.onLine);
        this.exit = { code, signal, forced: this.forced };
        file.end(() => resolve(this.exit as ServiceExit));
      };
      // 'close' waits for stdout/stderr to drain, so the tail holds the last words of a crash.
      child.once('close', finish);
      child.once('error', (err) => {
        this.tailLines.push(`failed to start: ${err.message}\n`, options.onLine);
        finish(null, null);
      });
    });
  }

  /** The exit, once it has happened. */
  get exitInfo(): ServiceExit | undefined {
    return this.exit;
  }

  /** The last `n` lines the service wrote (stdout and stderr interleaved), oldest first. */
  tail(n = 40): string[] {
    return this.tailLines.last(n);
  }

  /** SIGTERM, wait up to `timeoutMs`, then SIGKILL. Idempotent: later calls share the first. */
  stop(timeoutMs: number): Promise<ServiceExit> {
    this.stopping ??= (async () => {
      if (this.exit) return this.exit;
      this.signal('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
      const first = await Promise.race([this.exited, timedOut]);
      clearTimeout(timer);
      if (first !== 'timeout') return first;
      this.forced = true;
      this.signal('SIGKILL');
      return this.exited;
    })();
    return this.stopping;
  }

  /** SIGKILL now, synchronously: for a forced quit or a process `exit` hook, where nothing can be awaited. */
  killNow(): void {
    if (this.exit) return;
    this.forced = true;
    this.signal('SIGKILL');
  }

  private signal(signal: NodeJS.Signals): void {
    if (this.pid <= 0) return;
    try {
      // The child leads its own process group (detached), so this reaches anything it spawned too.
      process.kill(-this.pid, signal);
    } catch {
      try {
        this.child.kill(signal);
      } catch {
        // already gone
      }
    }
  }
}

/**
 * Starts `node --import tsx <entry>` in its own process group, so a Ctrl-C in the launcher's
 * terminal reaches only the launcher, which then stops the services in dependency order.
 */
export function spawnService(options: SpawnServiceOptions): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', options.entry], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  return new ServiceProcess(child, options);
}
