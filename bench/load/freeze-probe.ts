import { spawn, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { readFileSync } from 'node:fs';

/** A tick of the probe this much later than due counts as the machine having paused, ms. */
export const FREEZE_MS = 8;

/**
 * The probe's program: a 1 ms timer in an otherwise idle process, which prints every late tick as
 * `<from> <to>` (wall-clock ms, sub-ms precision): the span it could not run.
 */
const PROBE = `
const now = () => performance.timeOrigin + performance.now();
let last = now();
setInterval(() => {
  const t = now();
  if (t - last > 1 + ${FREEZE_MS}) process.stdout.write((last + 1) + ' ' + t + '\\n');
  last = t;
}, 1);
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
`;

/** A span the machine did not run the probe, wall-clock ms. */
export type Freeze = readonly [from: number, to: number];

/**
 * Pauses of the whole machine, seen from outside fastloop: an idle process, at a higher priority
 * where allowed, that should run every millisecond. On these VMs every process, the idle router
 * and billing services included, at times stalls 20–60 ms at once (the host runs something else:
 * /proc/stat counts steal time); a relay gap spanning such a pause is not fastloop's. Load the
 * stack makes cannot delay the probe much (it needs ~nothing and, reniced, wins the CPU), so what
 * it sees is the machine's, not the relay's.
 */
export class FreezeProbe {
  private readonly seen: Freeze[] = [];
  private buffered = '';

  /**
   * @param reniced whether the probe runs above the stack's priority. Without it, a saturated stack
   *   can delay the probe itself, and what it sees is no longer the machine's alone.
   */
  private constructor(
    private readonly child: ChildProcess,
    readonly reniced: boolean,
  ) {
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (text: string) => {
      this.buffered += text;
      const lines = this.buffered.split('\n');
      this.buffered = lines.pop() ?? '';
      for (const line of lines) {
        const [from, to] = line.split(' ').map(Number);
        if (Number.isFinite(from) && Number.isFinite(to)) this.seen.push([from, to]);
      }
    });
  }

  /** Starts the probe process; {@link stop} it on every path. */
  static start(): FreezeProbe {
    const child = spawn(process.execPath, ['-e', PROBE], { stdio: ['pipe', 'pipe', 'inherit'] });
    let reniced = false;
    try {
      if (child.pid !== undefined) setPriority(child.pid, -10);
      reniced = child.pid !== undefined;
    } catch {
      // not allowed (no CAP_SYS_NICE): the probe runs at normal priority
    }
    return new FreezeProbe(child, reniced);
  }

  /** The pauses seen that overlap `[from, to)` (wall-clock ms). */
  within(from: number, to: number): Freeze[] {
    return this.seen.filter(([a, b]) => b > from && a < to);
  }

  /** Ends the probe (its stdin closes; killed if it has not gone in a second). */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 1000);
    await exited;
    clearTimeout(timer);
  }
}

/** `gap` (wall-clock `[from, to)`, ms) less the time of it the machine was paused. */
export function gapLessFreezes(from: number, to: number, freezes: readonly Freeze[]): number {
  let paused = 0;
  for (const [a, b] of freezes) paused += Math.max(0, Math.min(to, b) - Math.max(from, a));
  return Math.max(0, to - from - paused);
}

/** Steal time so far of the whole machine (/proc/stat), ms: CPU the host gave to something else. */
export function stealMs(): number {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
    return (Number(cpu[8]) * 1000) / 100;
  } catch {
    return NaN;
  }
}
