import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { LineTail } from './line-tail';
import { PARENT_PID_ENV } from './parent-watch';

/** How an owned process ended. */
export interface ServiceExit {
  /** Exit code, or null when a signal ended it. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** True when its owner had to SIGKILL it after its stop timeout (or at once, with killNow). */
  readonly forced: boolean;
}

/** Options for {@link spawnOwned}. */
export interface SpawnOwnedOptions {
  /** A name for messages (`billing`, `redis`, …). */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  /** The child's whole environment; default process.env. {@link PARENT_PID_ENV} is always set on top. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** stdout and stderr both go here (truncated at start); default: only the in-memory tail. */
  readonly logFile?: string;
  /** Called for every complete output line, e.g. to echo it to a terminal. */
  readonly onLine?: (line: string) => void;
}

/** Options for {@link spawnNodeService}: a fastloop service entry, TypeScript (run with tsx) or a built bundle. */
export interface SpawnNodeServiceOptions extends Omit<SpawnOwnedOptions, 'command' | 'args'> {
  /** Absolute path of the entry: a `.ts` file runs with `--import tsx`, anything else (a bundle) as is. */
  readonly entry: string;
}

/** Every owned process still running in this process, for the exit hook. */
const live = new Set<OwnedProcess>();
let exitHookInstalled = false;

/**
 * A child process this process owns: it leads its own process group (so a signal reaches anything
 * it spawned), its output goes to a bounded in-memory tail (and optionally a log file), and it is
 * told our pid in {@link PARENT_PID_ENV}, so a fastloop service exits by itself if we die without
 * stopping it (see parent-watch). `stop()` is SIGTERM to the group, then SIGKILL after a grace
 * period, and is safe to call twice; whatever is still running when this process exits is SIGKILLed.
 */
export class OwnedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string | undefined;
  /** Resolves once the process has exited and its output is flushed. Never rejects. */
  readonly exited: Promise<ServiceExit>;
  private exit: ServiceExit | undefined;
  private forced = false;
  private stopping: Promise<ServiceExit> | undefined;
  private readonly tailLines = new LineTail();

  constructor(
    private readonly child: ChildProcess,
    options: SpawnOwnedOptions,
  ) {
    this.name = options.name;
    this.pid = child.pid ?? -1;
    this.logFile = options.logFile;
    const file: WriteStream | undefined = options.logFile
      ? createWriteStream(options.logFile, { flags: 'w' })
      : undefined;
    file?.on('error', () => undefined); // a full disk must not crash the owner; the tail still works
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        file?.write(chunk);
        this.tailLines.push(chunk, options.onLine);
      });
    }
    live.add(this);
    this.exited = new Promise<ServiceExit>((resolve) => {
      const finish = (code: number | null, signal: NodeJS.Signals | null) => {
        if (this.exit) return;
        live.delete(this);
        this.tailLines.end(options.onLine);
        this.exit = { code, signal, forced: this.forced };
        if (file) file.end(() => resolve(this.exit as ServiceExit));
        else resolve(this.exit);
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

  /** The last `n` lines the process wrote (stdout and stderr interleaved), oldest first. */
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
 * Starts `command` in a process group of its own, owned by this process. The group keeps a
 * terminal's Ctrl-C (sent to the foreground group) from reaching the child directly, so its owner
 * can stop children in order; the exit hook and the child's parent watch make sure none outlives us.
 */
export function spawnOwned(options: SpawnOwnedOptions): OwnedProcess {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => live.forEach((p) => p.killNow()));
  }
  const child = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    env: { ...(options.env ?? process.env), [PARENT_PID_ENV]: String(process.pid) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  return new OwnedProcess(child, options);
}

/**
 * Node flags every service gets, space-separated (`FASTLOOP_SERVICE_NODE_ARGS="--cpu-prof
 * --cpu-prof-dir=/tmp/prof"`): for profiling a whole stack, since NODE_OPTIONS refuses such flags.
 */
export const SERVICE_NODE_ARGS_ENV = 'FASTLOOP_SERVICE_NODE_ARGS';

/** Starts `node --import tsx <entry.ts>` (or `node <bundle.js>`) as an {@link OwnedProcess}. */
export function spawnNodeService(options: SpawnNodeServiceOptions): OwnedProcess {
  const extra = ((options.env ?? process.env)[SERVICE_NODE_ARGS_ENV] ?? '').split(' ').filter(Boolean);
  const loader = /\.[cm]?ts$/.test(options.entry) ? ['--import', 'tsx'] : [];
  return spawnOwned({ ...options, command: process.execPath, args: [...extra, ...loader, options.entry] });
}

/** The owned processes of this process that are still running, oldest first. */
export function liveOwnedProcesses(): readonly OwnedProcess[] {
  return [...live];
}

/**
 * Stops every owned process still running (SIGTERM, SIGKILL after `graceMs`), all at once. The
 * test runner calls it after each test file, so a spec that forgot a child (or whose setup timed
 * out while a start was in flight) cannot leave it running or hold Jest open.
 */
export async function stopAllOwned(graceMs: number): Promise<readonly OwnedProcess[]> {
  const left = [...live];
  await Promise.all(left.map((p) => p.stop(graceMs)));
  return left;
}
