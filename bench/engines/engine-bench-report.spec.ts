import { decodeRate, renderMarkdown, type EngineTurn } from './engine-bench-report';

describe('engine bench report', () => {
  it('measures the decode rate over the deltas after the first token', () => {
    expect(decodeRate(11, 100, 200)).toBe(100);
    expect(decodeRate(1, 100, 100)).toBe(0);
  });

  it('puts the three modes of a turn side by side with the cold/ws TTFT ratio', () => {
    const base = { engine: 'llamacpp', turn: 2, inputTokens: 80, outputTokens: 16, tokensPerSecond: 500 };
    const turns: EngineTurn[] = [
      { ...base, mode: 'ws', ttftMs: 10, cachedTokens: 60, evaluatedTokens: 20 },
      { ...base, mode: 'resend', ttftMs: 12, cachedTokens: 55, evaluatedTokens: 25 },
      { ...base, mode: 'resend-cold', ttftMs: 40, cachedTokens: 0, evaluatedTokens: 80 },
    ];
    const md = renderMarkdown(turns, { date: 'd', machine: 'm' });
    expect(md).toContain('| 2 | 80 | 10.0 | 60 / 20 | 12.0 | 55 / 25 | 40.0 | 80 | 4.00 | 500 | 500 |');
  });
});
