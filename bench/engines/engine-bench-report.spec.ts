import {
  decodeRate,
  modeOrder,
  MODES,
  overheadParts,
  renderMarkdown,
  spread,
  type EngineTurn,
} from './engine-bench-report';

/** The fields of a turn the tests below do not vary. */
const llamacppTurn = { engine: 'llamacpp', inputTokens: 80, cachedTokens: 0, outputTokens: 16, tokensPerSecond: 500 };

describe('engine bench report', () => {
  it('measures the decode rate over the deltas after the first token', () => {
    expect(decodeRate(11, 100, 200)).toBe(100);
    expect(decodeRate(1, 100, 100)).toBe(0);
  });

  it('takes medians and ranges', () => {
    expect(spread([5, 1, 3])).toEqual({ median: 3, min: 1, max: 5, n: 3 });
    expect(spread([4, 1, 3, 2])).toEqual({ median: 2.5, min: 1, max: 4, n: 4 });
    expect(spread([])).toBeUndefined();
  });

  it('rotates which mode goes first, so every mode runs first as often as any other', () => {
    const firsts = new Map<string, number>();
    for (let rep = 1; rep <= 4; rep++)
      for (let turn = 1; turn <= 8; turn++) {
        const order = modeOrder(MODES, rep, turn);
        expect([...order].sort()).toEqual([...MODES].sort());
        firsts.set(order[0], (firsts.get(order[0]) ?? 0) + 1);
      }
    expect([...firsts.values()]).toEqual([8, 8, 8, 8]);
  });

  it('puts the modes of a turn side by side: medians, ranges, and the API overhead paired per repetition', () => {
    const base = { ...llamacppTurn, turn: 2 };
    const turns: EngineTurn[] = [1, 2, 3].flatMap((rep) => [
      { ...base, rep, mode: 'ws' as const, ttftMs: 10 + rep, evaluatedTokens: 20, alignedTokens: 3 },
      { ...base, rep, mode: 'resend' as const, ttftMs: 12, evaluatedTokens: 25 },
      { ...base, rep, mode: 'resend-cold' as const, ttftMs: 40, evaluatedTokens: 80 },
      { ...base, rep, mode: 'direct' as const, ttftMs: 8 + rep, evaluatedTokens: 20, tokensPerSecond: 600 },
    ]);
    const md = renderMarkdown(turns, {
      date: 'd',
      machine: 'm',
      reps: 3,
      load: { llamacpp: { start: 0.5, end: 1 } },
      notes: [],
    });
    expect(md).toContain(
      '| 2 | 80 | 12.0 (11.0–13.0) | 12.0 (12.0–12.0) | 40.0 (40.0–40.0) | 10.0 (9.0–11.0) | 2.0 (2.0–2.0) | 20% | 3.33 | 20 / 3 | 80 | 500 | 600 |',
    );
    expect(md).toContain('llamacpp 0.50 at start, 1.00 at end');
  });

  it('splits ws − direct with the edge timing event into parts that add up, paired per repetition', () => {
    const base = { ...llamacppTurn, turn: 1 };
    const turns: EngineTurn[] = [
      // ws 30 ms: 4 at the edge before Generate, worker 21 (direct 18), Generate call 22, 4 after.
      { ...base, rep: 1, mode: 'ws', ttftMs: 30, edgeBeforeGenerateMs: 4, workerTtftMs: 21, generateTtftMs: 22 },
      { ...base, rep: 1, mode: 'direct', ttftMs: 18 },
      // rep 2's direct turn is of another rep: no pair.
      { ...base, rep: 2, mode: 'ws', ttftMs: 50, edgeBeforeGenerateMs: 4, workerTtftMs: 21, generateTtftMs: 22 },
      { ...base, rep: 3, mode: 'direct', ttftMs: 18 },
      // untimed ws turn: no pair.
      { ...base, rep: 3, mode: 'ws', ttftMs: 40 },
    ];
    const parts = overheadParts(turns);
    expect(parts).toEqual([
      { whole: 12, edgeBeforeGenerate: 4, workerBeyondModel: 3, generateHop: 1, afterFirstChunk: 4 },
    ]);
    const p = parts[0];
    expect(p.edgeBeforeGenerate + p.workerBeyondModel + p.generateHop + p.afterFirstChunk).toBe(p.whole);
    const md = renderMarkdown(turns, { date: 'd', machine: 'm', reps: 3, load: {}, notes: [] });
    expect(md).toContain('| **ws − direct** | **12.00** | **12.00** |');
    expect(md).toMatch(/\| worker beyond the model alone .* \| 3\.00 \| 3\.00 \|/);
  });
});
