import type { Mode } from './options';
import type { ModeSummary } from './summary';

/** Line colours per mode (colour-blind-safe Okabe–Ito). */
export const MODE_COLORS: Record<Mode, string> = {
  'http-stateless': '#D55E00',
  'http-previous': '#E69F00',
  ws: '#0072B2',
  grpc: '#009E73',
};

const WIDTH = 760;
const PANEL_HEIGHT = 280;
const MARGIN = { left: 70, right: 170, top: 40, bottom: 45 };
/** Overheads at or below this (noise can make one ≤ 0) are drawn at the floor of the log axis. */
const FLOOR_MS = 0.05;

/**
 * A hand-written SVG line chart: per-turn overhead (ms, log scale) against turn index, one panel
 * per TPS setting, one line per mode, with axis labels and a legend.
 */
export function renderSvg(all: readonly ModeSummary[]): string {
  const summaries = all.filter((s) => s.phase === 'interleaved');
  const tpsList = [...new Set(summaries.map((s) => s.tps))];
  const height = Math.max(1, tpsList.length) * PANEL_HEIGHT + 30;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">Per-turn overhead around the engine (client TTFT − engine time), median over repetitions, simulated engine</text>`,
  ];
  tpsList.forEach((tps, i) =>
    parts.push(
      panel(
        summaries.filter((s) => s.tps === tps),
        tps,
        30 + i * PANEL_HEIGHT,
      ),
    ),
  );
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function panel(rows: readonly ModeSummary[], tps: number, top: number): string {
  const x0 = MARGIN.left;
  const x1 = WIDTH - MARGIN.right;
  const y0 = top + MARGIN.top;
  const y1 = top + PANEL_HEIGHT - MARGIN.bottom;
  const turns = Math.max(2, ...rows.map((r) => r.turns));
  const values = rows.flatMap((r) => Object.values(r.overheadByTurn)).filter((v) => Number.isFinite(v));
  const lo = Math.floor(Math.log10(Math.max(FLOOR_MS, Math.min(...values, 1))));
  const hi = Math.ceil(Math.log10(Math.max(FLOOR_MS * 10, ...values, 1)));
  const top10 = hi > lo ? hi : lo + 1;
  const sx = (turn: number) => x0 + ((turn - 1) / (turns - 1)) * (x1 - x0);
  const sy = (ms: number) => y1 - ((Math.log10(Math.max(ms, FLOOR_MS)) - lo) / (top10 - lo)) * (y1 - y0);
  const out: string[] = [
    `<g>`,
    `<text x="${x0}" y="${top + 22}" font-size="13" font-weight="bold">${tps} tokens/s</text>`,
  ];
  // Axes and grid.
  out.push(
    `<line x1="${x0}" y1="${y1}" x2="${x1}" y2="${y1}" stroke="#333"/>`,
    `<line x1="${x0}" y1="${y0}" x2="${x0}" y2="${y1}" stroke="#333"/>`,
  );
  for (let e = lo; e <= top10; e++) {
    // Decades, plus 2× and 5× (lighter) so values can be read off a log axis.
    for (const m of e < top10 ? [1, 2, 5] : [1]) {
      const y = sy(m * 10 ** e);
      out.push(`<line x1="${x0}" y1="${y}" x2="${x1}" y2="${y}" stroke="${m === 1 ? '#ccc' : '#eee'}"/>`);
      out.push(
        `<text x="${x0 - 6}" y="${y + 4}" text-anchor="end"${m === 1 ? '' : ' fill="#777" font-size="10"'}>${tickLabel(m * 10 ** e)}</text>`,
      );
    }
  }
  const step = turns <= 12 ? 1 : turns <= 30 ? 5 : 10;
  for (let t = 1; t <= turns; t = t === 1 && step > 1 ? step : t + step) {
    const x = sx(t);
    out.push(
      `<line x1="${x}" y1="${y1}" x2="${x}" y2="${y1 + 4}" stroke="#333"/>`,
      `<text x="${x}" y="${y1 + 17}" text-anchor="middle">${t}</text>`,
    );
  }
  out.push(`<text x="${(x0 + x1) / 2}" y="${y1 + 35}" text-anchor="middle">turn</text>`);
  out.push(
    `<text transform="translate(${x0 - 48} ${(y0 + y1) / 2}) rotate(-90)" text-anchor="middle">overhead, ms (log scale)</text>`,
  );
  // One line per mode.
  rows.forEach((r, i) => {
    const points = Object.entries(r.overheadByTurn)
      .filter(([, v]) => Number.isFinite(v))
      .map(([t, v]) => `${sx(Number(t)).toFixed(1)},${sy(v).toFixed(1)}`);
    out.push(`<polyline fill="none" stroke="${MODE_COLORS[r.mode]}" stroke-width="2" points="${points.join(' ')}"/>`);
    const ly = y0 + 8 + i * 18;
    out.push(
      `<line x1="${x1 + 15}" y1="${ly}" x2="${x1 + 40}" y2="${ly}" stroke="${MODE_COLORS[r.mode]}" stroke-width="3"/>`,
      `<text x="${x1 + 46}" y="${ly + 4}">${r.mode}</text>`,
    );
  });
  out.push('</g>');
  return out.join('\n');
}

function tickLabel(ms: number): string {
  return ms >= 1 ? String(Math.round(ms)) : String(Number(ms.toPrecision(1)));
}
