import { byPackage, compareWindows, ProfileSamples, type CpuProfile } from './cpu-profile';

const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });

/**
 * root → main → (a, b → c); idle beside. Samples (µs): a 1000, c 2000, idle 5000, b 500, and at
 * 1.5 s one more of c, 3000.
 */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)', ''), children: [2, 6] },
    { id: 2, callFrame: frame('main', 'file:///r/apps/edge/src/main.ts'), children: [3, 4] },
    { id: 3, callFrame: frame('a', 'file:///r/node_modules/@grpc/grpc-js/build/src/call.js') },
    { id: 4, callFrame: frame('b', 'file:///r/apps/edge/src/turn/x.ts'), children: [5] },
    { id: 5, callFrame: frame('c', 'file:///r/libs/proto/src/writer.ts') },
    { id: 6, callFrame: frame('(idle)', '') },
  ],
  samples: [3, 5, 6, 4, 5],
  timeDeltas: [1000, 2000, 5000, 500, 1_491_500],
};

describe('ProfileSamples', () => {
  const p = new ProfileSamples(profile);

  it('sums self and inclusive time per function, idle left out', () => {
    const w = p.window();
    expect(w.busyMs).toBeCloseTo(1 + 2 + 0.5 + 1491.5);
    expect(w.self.get('a node_modules/@grpc/grpc-js/build/src/call.js')).toBeCloseTo(1);
    expect(w.self.get('b apps/edge/src/turn/x.ts')).toBeCloseTo(0.5);
    expect(w.inclusive.get('b apps/edge/src/turn/x.ts')).toBeCloseTo(0.5 + 2 + 1491.5);
    expect(w.inclusive.get('main apps/edge/src/main.ts')).toBeCloseTo(w.busyMs);
  });

  it('keeps to a window of time', () => {
    const w = p.window(0, 1);
    expect(w.busyMs).toBeCloseTo(3.5);
    expect(p.busyPerSecond().map((v) => Math.round(v * 10) / 10)).toEqual([3.5, 1491.5]);
  });

  it('says where a function was called from', () => {
    const callers = p.callers(/^c /, 0, 1, 2);
    expect([...callers]).toEqual([['b apps/edge/src/turn/x.ts < main apps/edge/src/main.ts', 2]]);
  });

  it('groups self time by package or source folder', () => {
    const groups = byPackage(p.window(0, 1).self);
    expect(groups.get('@grpc/grpc-js')).toBeCloseTo(1);
    expect(groups.get('apps/edge/src/turn')).toBeCloseTo(0.5);
    expect(groups.get('libs/proto/src/writer.ts')).toBeCloseTo(2);
  });

  it('compares two windows per unit of work, largest increase first', () => {
    const a = new Map([
      ['f', 10],
      ['g', 4],
    ]);
    const b = new Map([
      ['f', 10],
      ['g', 12],
      ['h', 2],
    ]);
    expect(compareWindows(a, 2, b, 2)).toEqual([
      { key: 'g', a: 2, b: 6, delta: 4 },
      { key: 'h', a: 0, b: 1, delta: 1 },
      { key: 'f', a: 5, b: 5, delta: 0 },
    ]);
  });
});
