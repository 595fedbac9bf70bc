import type { UsageCounters, UsageRow } from '@fastloop/protocol';

/** A row of `GET /v1/usage`, or its totals (which have no tenant, model or date). */
type UsageTableRow = UsageCounters & Partial<Pick<UsageRow, 'tenant' | 'model' | 'date'>>;

const COLUMNS: [header: string, cell: (r: UsageTableRow) => string, right: boolean][] = [
  ['date', (r) => r.date ?? '', false],
  ['tenant', (r) => r.tenant ?? '', false],
  ['model', (r) => r.model ?? '', false],
  ['responses', (r) => count(r.responses), true],
  ['input', (r) => count(r.input_tokens), true],
  ['cached', (r) => count(r.cached_tokens), true],
  ['output', (r) => count(r.output_tokens), true],
  ['reasoning', (r) => count(r.reasoning_tokens), true],
  ['cost (USD)', (r) => r.cost_usd.toFixed(4), true],
];

function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** The usage report as an aligned text table with a totals line; "no usage" when empty. */
export function formatUsageTable(body: {
  data: UsageTableRow[];
  totals: UsageTableRow;
  start?: string;
  end?: string;
}): string {
  const title = `usage ${body.start ?? ''} .. ${body.end ?? ''}`.trim();
  if (body.data.length === 0) return `${title}\nno usage\n`;
  const lines = [...body.data, { ...body.totals, date: 'total' }].map((r) => COLUMNS.map(([, cell]) => cell(r)));
  const headers = COLUMNS.map(([h]) => h);
  const widths = headers.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]) =>
    cells
      .map((c, i) => (COLUMNS[i][2] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const body_ = lines.map(fmt);
  return [title, fmt(headers), rule, ...body_.slice(0, -1), rule, body_[body_.length - 1]].join('\n') + '\n';
}
