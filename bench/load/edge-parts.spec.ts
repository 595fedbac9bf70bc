import { ProfileSamples, type CpuProfile } from '../profile/cpu-profile';
import { EDGE_PARTS, edgeCpuParts, edgeCpuPartsLines, OTHER_PART, partOf } from './edge-parts';

const key = (name: string, file: string) => `${name} ${file}`;
const part = (title: RegExp) => EDGE_PARTS.find((p) => title.test(p.name))!.name;

describe('partOf', () => {
  it('gives a sample to what the turn was doing before the mechanism it ran on', () => {
    const writeUnderModeration = [
      key('writev', '(native)'),
      key('send', 'libs/service-kit/src/mux/mux-client.ts'),
      key('flush', 'apps/edge/src/safety/output-moderator.ts'),
    ];
    expect(partOf(writeUnderModeration)).toBe(part(/^output moderation/));
    const tokenizing = [
      key('asciiPieceRank', 'libs/model-profiles/src/lib/harmony/o200k-ascii-ranks.ts'),
      key('fit', 'apps/edge/src/turn/render-stage.ts'),
    ];
    expect(partOf(tokenizing)).toBe(part(/^tokenizing/));
  });

  it('takes socket syscalls, gRPC, frames and the runtime by their frames', () => {
    expect(partOf([key('writev', '(native)'), key('uncork', 'node:streams/writable')])).toBe(part(/^socket writes/));
    expect(partOf([key('decode', 'libs/proto/src/generated/x.ts'), key('onData', 'node:http2/core')])).toBe(
      part(/^gRPC/),
    );
    expect(partOf([key('parseText', 'apps/edge/src/session/decode-client-event.ts')])).toBe(part(/^client frames in/));
    expect(partOf([key('(garbage collector)', '(native)')])).toBe(part(/^garbage/));
    expect(partOf([key('(program)', '(native)')])).toBe(part(/^runtime/));
    // A native write not innermost is no syscall: the frame that was running is.
    expect(partOf([key('runTurn', 'apps/edge/src/turn/run-turn.ts'), key('writev', '(native)')])).toBe(OTHER_PART);
  });
});

const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });

/** root → (fastEncodeO200k, writev, runTurn, idle); 1 ms samples from startTime 5 s. */
const profile: CpuProfile = {
  startTime: 5_000_000,
  nodes: [
    { id: 1, callFrame: frame('(root)', ''), children: [2, 3, 4, 5] },
    {
      id: 2,
      callFrame: frame('fastEncodeO200k', 'file:///r/libs/model-profiles/src/lib/harmony/fast-o200k-encoder.ts'),
    },
    { id: 3, callFrame: frame('writev', '') },
    { id: 4, callFrame: frame('runTurn', 'file:///r/apps/edge/src/turn/run-turn.ts') },
    { id: 5, callFrame: frame('(idle)', '') },
  ],
  // Second 0: 3 of tokenizing, 1 of writev, 6 idle; second 1: 4 of runTurn.
  samples: [2, 2, 2, 3, 5, 5, 5, 5, 5, 5, 4, 4, 4, 4],
  timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 995_000, 1000, 1000, 1000],
};

describe('edgeCpuParts', () => {
  const samples = new ProfileSamples(profile);

  it('places a monotonic clock reading on the profile', () => {
    expect(samples.secondsAt(6_500_000)).toBeCloseTo(1.5);
  });

  it('splits the busy samples of the window by part and scales the shares to CPU per turn', () => {
    const parts = edgeCpuParts(
      samples,
      { fromS: 0, toS: 0.5 },
      { loops: 1, turns: 2, procMsPerTurn: 8, intervalUs: 1000 },
    );
    const byName = new Map(parts.parts.map((p) => [p.name, p]));
    expect(parts.profiledMsPerTurn).toBeCloseTo(2); // 4 busy ms over 2 turns
    expect(byName.get(part(/^tokenizing/))!.share).toBeCloseTo(0.75);
    expect(byName.get(part(/^socket writes/))!.msPerTurn).toBeCloseTo(2);
    expect(byName.get(OTHER_PART)!.share).toBe(0);
    expect(parts.parts.reduce((a, p) => a + p.share, 0)).toBeCloseTo(1);
    const later = edgeCpuParts(
      samples,
      { fromS: 0.5, toS: 2 },
      { loops: 1, turns: 1, procMsPerTurn: 3, intervalUs: 1000 },
    );
    expect(later.parts.find((p) => p.name === OTHER_PART)!.msPerTurn).toBeCloseTo(3);
  });

  it('renders the parts largest first against the target, one column group per level', () => {
    const level = (loops: number, procMsPerTurn: number) =>
      edgeCpuParts(samples, { fromS: 0, toS: 0.5 }, { loops, turns: 2, procMsPerTurn, intervalUs: 2000 });
    const rows = (lines: string[]) => lines.filter((l) => l.startsWith('| ') && !l.startsWith('| part'));
    const alone = rows(edgeCpuPartsLines([level(100, 8)], 1));
    expect(alone[0]).toMatch(/^\| tokenizing .* \| 75\.0% \| 6\.00 \|$/);
    expect(alone.at(-1)).toBe('| **in all** | 100% | **8.00** |');
    expect(edgeCpuPartsLines([], 1)).toEqual([]);
    // Beside the unprofiled levels of the same loops (500 has none here): each share of their figure.
    const measured = (loops: number) => (loops === 100 ? 4 : undefined);
    const lines = edgeCpuPartsLines([level(100, 8), level(500, 2)], 1, measured);
    expect(lines.find((l) => l.startsWith('| part'))).toBe(
      '| part | 100 loops: share | profiled ms per turn | of the 100-loop level above (ms) | 500 loops: share | profiled ms per turn |',
    );
    const both = rows(lines);
    expect(both[0]).toMatch(/^\| tokenizing .* \| 75\.0% \| 6\.00 \| 3\.00 \| 75\.0% \| 1\.50 \|$/);
    expect(both.at(-1)).toBe('| **in all** | 100% | **8.00** | **4.00** | 100% | **2.00** |');
  });
});
