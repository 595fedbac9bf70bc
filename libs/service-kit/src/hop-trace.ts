import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the marks go: set (e.g. through the launcher's environment) to trace; unset, a mark is one test. */
export const HOP_TRACE_DIR_ENV = 'FASTLOOP_HOP_TRACE_DIR';

/** A benchmark client's mark when it starts a turn: a trace that has it times turns from there (bench/profile/hop-trace.ts). */
export const CLIENT_TURN_MARK = 'client.start';

/** Marks kept per process at most (~50 bytes each): a forgotten trace cannot grow without bound. */
const MAX_MARKS = 1_000_000;

/**
 * The moments a turn crosses each process, on one clock for all of them (wall time in µs:
 * `performance.timeOrigin + performance.now()`, which the processes of one machine share), so a
 * turn's hops can be lined up across the edge, safety and the worker. The edge's timing event says
 * how long it waited for the verdict; only marks on both sides say whether the Classify call sat in
 * the edge, on the wire or in safety's queue. A diagnostic: with {@link HOP_TRACE_DIR_ENV} set the
 * process writes `<dir>/<pid>.hops` when it exits (one `µs label` line per mark);
 * `bench/profile/hop-trace.ts` merges the files into timelines.
 */
export class HopTrace {
  private readonly lines: string[] = [];
  private registered = false;

  constructor(private readonly dir: string | undefined) {}

  get enabled(): boolean {
    return this.dir !== undefined;
  }

  mark(label: string): void {
    if (this.dir === undefined || this.lines.length >= MAX_MARKS) return;
    if (!this.registered) {
      this.registered = true;
      process.once('exit', () => this.write());
    }
    this.lines.push(`${Math.round((performance.timeOrigin + performance.now()) * 1000)} ${label}`);
  }

  /** Writes the marks so far (at exit; tests call it). */
  write(): void {
    if (this.dir === undefined || this.lines.length === 0) return;
    writeFileSync(join(this.dir, `${process.pid}.hops`), `${this.lines.join('\n')}\n`);
  }
}

/** The process's trace, on when {@link HOP_TRACE_DIR_ENV} was set at start. */
export const hopTrace = new HopTrace(process.env[HOP_TRACE_DIR_ENV] || undefined);
