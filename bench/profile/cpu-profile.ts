import { readFileSync } from 'node:fs';

/** The parts of a V8 `.cpuprofile` (node --cpu-prof) read here. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
  /** When sampling began, µs of the monotonic clock (`process.hrtime` reads the same on Linux). */
  startTime?: number;
}

/** A function as the reports name it: `name file` (the path from apps/, libs/ or node_modules/ on). */
export type FrameKey = string;

/** One sample: its frame and its callers up to the root (innermost first), and its time, µs. */
interface Sample {
  stack: FrameKey[];
  atUs: number;
  us: number;
  idle: boolean;
}

/** A profile's samples with their stacks, ready for windows of time. */
export class ProfileSamples {
  readonly samples: Sample[] = [];
  /** {@link CpuProfile.startTime}: where second 0 of the windows is on the monotonic clock, µs. */
  readonly startUs: number;

  constructor(profile: CpuProfile) {
    this.startUs = profile.startTime ?? 0;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const stacks = new Map<number, FrameKey[]>();
    const stackOf = (id: number): FrameKey[] => {
      let stack = stacks.get(id);
      if (!stack) {
        const up = parent.get(id);
        stack = [frameKey(byId.get(id)!.callFrame), ...(up === undefined ? [] : stackOf(up))];
        stacks.set(id, stack);
      }
      return stack;
    };
    let at = 0;
    profile.samples.forEach((id, i) => {
      const us = profile.timeDeltas[i] ?? 0;
      at += us;
      this.samples.push({ stack: stackOf(id), atUs: at, us, idle: byId.get(id)!.callFrame.functionName === '(idle)' });
    });
  }

  static read(file: string): ProfileSamples {
    return new ProfileSamples(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
  }

  /** Busy (not idle) ms in each second of the profile: where the load was. */
  busyPerSecond(): number[] {
    const out: number[] = [];
    for (const s of this.samples) {
      const second = Math.floor(s.atUs / 1e6);
      while (out.length <= second) out.push(0);
      if (!s.idle) out[second] += s.us / 1000;
    }
    return out;
  }

  /**
   * Busy time in `[fromS, toS)` (seconds from the profile's start), ms: in all, per function by
   * itself (self) and with what it called (inclusive; recursion counted once).
   */
  window(fromS = 0, toS = Infinity): { busyMs: number; self: Map<FrameKey, number>; inclusive: Map<FrameKey, number> } {
    const self = new Map<FrameKey, number>();
    const inclusive = new Map<FrameKey, number>();
    let busyMs = 0;
    for (const s of this.inWindow(fromS, toS)) {
      const ms = s.us / 1000;
      busyMs += ms;
      add(self, s.stack[0], ms);
      for (const key of new Set(s.stack)) add(inclusive, key, ms);
    }
    return { busyMs, self, inclusive };
  }

  /** Seconds from the profile's start at `monotonicUs` (µs of `process.hrtime`), for windows. */
  secondsAt(monotonicUs: number): number {
    return (monotonicUs - this.startUs) / 1e6;
  }

  /** Busy time in `[fromS, toS)` grouped by `keyOf` of each sample's stack (innermost first), ms. */
  grouped(keyOf: (stack: readonly FrameKey[]) => string, fromS = 0, toS = Infinity): Map<string, number> {
    const out = new Map<string, number>();
    for (const s of this.inWindow(fromS, toS)) add(out, keyOf(s.stack), s.us / 1000);
    return out;
  }

  /**
   * Where the time of the functions matching `pattern` was spent from: each sample under the
   * nearest matching frame, grouped by that frame's `depth` callers, ms.
   */
  callers(pattern: RegExp, fromS = 0, toS = Infinity, depth = 6): Map<string, number> {
    const out = new Map<string, number>();
    for (const s of this.inWindow(fromS, toS)) {
      const at = s.stack.findIndex((k) => pattern.test(k));
      if (at < 0) continue;
      add(out, s.stack.slice(at + 1, at + 1 + depth).join(' < '), s.us / 1000);
    }
    return out;
  }

  private *inWindow(fromS: number, toS: number): Generator<Sample> {
    for (const s of this.samples) if (!s.idle && s.atUs >= fromS * 1e6 && s.atUs < toS * 1e6) yield s;
  }
}

/** Self time grouped by package or source folder (`@grpc/grpc-js`, `apps/edge/src/turn`, `node:streams`, …), ms. */
export function byPackage(self: ReadonlyMap<FrameKey, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [key, ms] of self) {
    const file = key.slice(key.indexOf(' ') + 1);
    const group =
      /^node_modules\/(@[^/]+\/[^/]+|[^/]+)/.exec(file)?.[1] ??
      /^((?:apps|libs)\/[^/]+\/src\/[^/:]+)/.exec(file)?.[1] ??
      (file.startsWith('node:') ? file.split('/').slice(0, 2).join('/') : key);
    add(out, group, ms);
  }
  return out;
}

/** Per unit of work (a turn): each function's time in `b` less its time in `a`, largest first, ms. */
export function compareWindows(
  a: ReadonlyMap<FrameKey, number>,
  aUnits: number,
  b: ReadonlyMap<FrameKey, number>,
  bUnits: number,
): { key: FrameKey; a: number; b: number; delta: number }[] {
  const keys = new Set([...a.keys(), ...b.keys()]);
  return [...keys]
    .map((key) => {
      const av = (a.get(key) ?? 0) / aUnits;
      const bv = (b.get(key) ?? 0) / bUnits;
      return { key, a: av, b: bv, delta: bv - av };
    })
    .sort((x, y) => y.delta - x.delta);
}

/** Largest entries first. */
export function top<K>(map: ReadonlyMap<K, number>, n: number): [K, number][] {
  return [...map].sort((x, y) => y[1] - x[1]).slice(0, n);
}

function frameKey(f: CpuProfile['nodes'][number]['callFrame']): FrameKey {
  const file = f.url.replace(/^.*?\/(apps|libs|node_modules)\//, '$1/').replace(/^node:internal\//, 'node:');
  return `${f.functionName || '(anonymous)'} ${file || '(native)'}`;
}

function add<K>(map: Map<K, number>, key: K, value: number): void {
  map.set(key, (map.get(key) ?? 0) + value);
}
