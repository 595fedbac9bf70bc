import { formatUsageTable } from './usage-table';

describe('formatUsageTable', () => {
  it('aligns one line per row under a header, then the totals', () => {
    const row = {
      tenant: 'acme',
      model: 'fastloop-sim',
      date: '2026-11-30',
      responses: 12,
      input_tokens: 12345,
      cached_tokens: 10000,
      output_tokens: 678,
      reasoning_tokens: 0,
      cost_usd: 0.00068,
    };
    const text = formatUsageTable({
      data: [row],
      totals: { ...row, tenant: undefined, model: undefined, date: undefined },
      start: '2026-11-01',
      end: '2026-11-30',
    });
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe('usage 2026-11-01 .. 2026-11-30');
    expect(lines[1]).toMatch(
      /^date\s+tenant\s+model\s+responses\s+input\s+cached\s+output\s+reasoning\s+cost \(USD\)$/,
    );
    expect(lines[3]).toContain('acme');
    expect(lines[3]).toContain('12,345');
    expect(lines[5]).toMatch(/^total\s+12\s+12,345/);
    // Every line of the table has the same width up to the last column.
    expect(new Set([lines[1], lines[3], lines[5]].map((l) => l.length)).size).toBe(1);
  });

  it('says so when there is no usage', () => {
    expect(formatUsageTable({ data: [], totals: {} as never, start: 'a', end: 'b' })).toBe('usage a .. b\nno usage\n');
  });
});
