import { readFileSync } from 'node:fs';

/**
 * Who owns an outbox folder: a pid is not enough. In a container the edge is pid 1 every time it
 * starts, and its outbox folder survives the restart, so a pid alone makes the new pid 1 look
 * like the (dead) previous owner. The process's start time (clock ticks since boot, field 22 of
 * /proc/<pid>/stat) tells two processes with one pid apart, and the boot id
 * (/proc/sys/kernel/random/boot_id) tells a reboot (or another machine) apart, where start times
 * restart from zero. Where /proc is missing (macOS), only the pid is known, as before.
 */
export interface ProcessId {
  pid: number;
  /** Start time in clock ticks since boot, when /proc tells it. */
  startTime?: number;
  /** The kernel's boot id, when /proc tells it. */
  bootId?: string;
}

/** Reads /proc; replaceable in tests. */
export interface ProcessTable {
  /** This process. */
  self(): ProcessId;
  /** Whether the process `id` names still runs (the same pid, start time and boot). */
  isRunning(id: ProcessId): boolean;
}

/** The ProcessTable of this machine. */
export const LOCAL_PROCESSES: ProcessTable = {
  self: () => ({ pid: process.pid, ...definedOnly({ startTime: startTimeOf('self'), bootId: bootId() }) }),
  isRunning(id) {
    const boot = bootId();
    if (id.bootId !== undefined && boot !== undefined && id.bootId !== boot) return false;
    if (!pidRuns(id.pid)) return false;
    if (id.startTime === undefined) return true;
    const now = startTimeOf(id.pid);
    return now === undefined || now === id.startTime;
  },
};

/** Serializes an owner for the lock file (one JSON line). */
export function formatProcessId(id: ProcessId): string {
  return JSON.stringify(id);
}

/** Parses a lock file: this format, or the older bare pid. `undefined` when it names no process. */
export function parseProcessId(text: string): ProcessId | undefined {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return positivePid(Number.parseInt(trimmed, 10));
  try {
    const parsed = JSON.parse(trimmed) as Partial<ProcessId>;
    const pid = positivePid(Number(parsed.pid));
    if (!pid) return undefined;
    return {
      ...pid,
      ...definedOnly({
        startTime: typeof parsed.startTime === 'number' ? parsed.startTime : undefined,
        bootId: typeof parsed.bootId === 'string' ? parsed.bootId : undefined,
      }),
    };
  } catch {
    return undefined;
  }
}

function positivePid(pid: number): ProcessId | undefined {
  return Number.isInteger(pid) && pid > 0 ? { pid } : undefined;
}

/** Whether a process with this pid runs (EPERM: it runs, as another user). */
export function pidRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Field 22 of /proc/<pid>/stat, read after the command name (which may hold spaces and parentheses). */
function startTimeOf(pid: number | 'self'): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]); // fields[0] is field 3 (state)
    return Number.isFinite(ticks) ? ticks : undefined;
  } catch {
    return undefined;
  }
}

let cachedBootId: string | undefined | null = null;

function bootId(): string | undefined {
  if (cachedBootId === null) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
    } catch {
      cachedBootId = undefined;
    }
  }
  return cachedBootId;
}

function definedOnly<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
