import { Worker } from 'node:worker_threads';

/**
 * Set by whoever spawns a fastloop service (the launcher, a test) to its own pid: the service exits
 * when its parent changes, i.e. when its owner died without stopping it (SIGKILL, a closed terminal,
 * a crashed test runner). Unset (Kubernetes, systemd), nothing is watched but the drain deadline.
 */
export const PARENT_PID_ENV = 'FASTLOOP_PARENT_PID';

/** Options for {@link startProcessWatchdog}. */
export interface ProcessWatchdogOptions {
  /** The pid our parent must keep; default {@link PARENT_PID_ENV} from the environment, else none. */
  readonly parentPid?: number;
  /** How often the parent is checked; default 250 ms. */
  readonly intervalMs?: number;
  /** Called on the main thread once the parent is gone (if the main thread is free to run it). */
  readonly onOrphaned: () => void;
  /** After the parent is gone, the process is SIGKILLed this much later even if its event loop is blocked. */
  readonly orphanGraceMs: number;
}

/** A running watchdog. */
export interface ProcessWatchdog {
  /** SIGKILLs this process `ms` from now unless it has exited by then, even if the event loop is blocked. */
  killAfter(ms: number): void;
  /** Stops watching (for tests). */
  close(): Promise<void>;
}

// Runs on its own thread, so it keeps time while a CPU-bound request blocks the main event loop
// (an edge once ignored SIGTERM for 9 minutes that way). Plain JS: a worker does not go through tsx.
const WATCHDOG_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let killAt = 0;
let orphaned = false;
const arm = (ms) => { const at = Date.now() + ms; if (killAt === 0 || at < killAt) killAt = at; };
parentPort.on('message', (m) => { if (m && m.type === 'kill-after') arm(m.ms); });
setInterval(() => {
  if (!orphaned && workerData.parentPid > 0 && process.ppid !== workerData.parentPid) {
    orphaned = true;
    parentPort.postMessage('orphaned');
    arm(workerData.orphanGraceMs);
  }
  if (killAt !== 0 && Date.now() >= killAt) process.kill(process.pid, 'SIGKILL');
}, workerData.intervalMs);
`;

/**
 * Starts a watchdog thread that (1) notices when this process's owner is gone and asks the main
 * thread to drain, then kills the process after a grace period, and (2) enforces a drain deadline
 * that a blocked event loop cannot ignore. The thread never keeps the process alive.
 */
export function startProcessWatchdog(options: ProcessWatchdogOptions): ProcessWatchdog {
  const parentPid = options.parentPid ?? parentPidFromEnv();
  const worker = new Worker(WATCHDOG_SOURCE, {
    eval: true,
    workerData: {
      parentPid: parentPid ?? 0,
      intervalMs: options.intervalMs ?? 250,
      orphanGraceMs: options.orphanGraceMs,
    },
    // The watchdog needs none of the parent's flags (tsx's loader would only slow its start).
    execArgv: [],
    stdout: false,
    stderr: false,
  });
  worker.unref();
  worker.on('message', (m) => {
    if (m === 'orphaned') options.onOrphaned();
  });
  worker.on('error', () => undefined); // a dead watchdog must not take the service down
  return {
    killAfter: (ms) => worker.postMessage({ type: 'kill-after', ms }),
    close: async () => {
      await worker.terminate();
    },
  };
}

function parentPidFromEnv(): number | undefined {
  const raw = process.env[PARENT_PID_ENV];
  const pid = raw === undefined ? NaN : Number(raw);
  return Number.isInteger(pid) && pid > 1 ? pid : undefined;
}
