import { fmt } from '../agent-loop/summary';
import type { LoadReport } from './report';
import { MAX_ADDED_P99_GAP_MS } from './relay';

const WIDTH = 760;
const PANEL = 300;
const M = { left: 70, right: 170, top: 45, bottom: 50 };

interface Series {
  label: string;
  color: string;
  points: [number, number][];
}

/**
 * Hand-written SVG: (1) first-output p50/p99 against concurrent agent loops (log x), with turns/s
 * labelled per point; (2) the relay's added p99 stall (time-weighted delta gap) against aggregate tokens/s, with the
 * 2 ms bound.
 */
export function renderLoadSvg(report: LoadReport): string {
  const panels: string[] = [];
  if (report.loops.length > 0) {
    const loops = report.loops;
    panels.push(
      panel(
        0,
        'Concurrent WebSocket agent loops',
        'loops (log scale)',
        'first output, ms',
        true,
        [
          { label: 'p50', color: '#0072B2', points: loops.map((r) => [r.loops, r.firstOutputP50Ms]) },
          { label: 'p99', color: '#D55E00', points: loops.map((r) => [r.loops, r.firstOutputP99Ms]) },
        ],
        loops.map((r) => [r.loops, r.firstOutputP99Ms, `${fmt(r.turnsPerS)} turns/s`]),
      ),
    );
  }
  if (report.relay && report.relay.steps.length > 0) {
    const steps = report.relay.steps;
    panels.push(
      panel(
        panels.length,
        `Relay: streams at ${report.relay.streamTps} tokens/s each`,
        'tokens/s relayed (all streams)',
        'added p99 stall, ms',
        false,
        [
          { label: 'added p99', color: '#009E73', points: steps.map((s) => [s.tokensPerS, s.addedP99Ms]) },
          {
            label: `${MAX_ADDED_P99_GAP_MS} ms bound`,
            color: '#999999',
            points: [
              [Math.min(...steps.map((s) => s.tokensPerS)), MAX_ADDED_P99_GAP_MS],
              [Math.max(...steps.map((s) => s.tokensPerS)), MAX_ADDED_P99_GAP_MS],
            ],
          },
        ],
        steps.map((s) => [s.tokensPerS, s.addedP99Ms, `${s.streams}`]),
      ),
    );
  }
  const height = Math.max(1, panels.length) * PANEL + 10;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">\n<rect width="100%" height="100%" fill="#ffffff"/>\n${panels.join('\n')}\n</svg>\n`;
}

function panel(
  index: number,
  title: string,
  xLabel: string,
  yLabel: string,
  logX: boolean,
  series: Series[],
  labels: [number, number, string][],
): string {
  const top = index * PANEL;
  const x0 = M.left;
  const x1 = WIDTH - M.right;
  const y0 = top + M.top;
  const y1 = top + PANEL - M.bottom;
  const all = series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const tx = (x: number) => (logX ? Math.log10(Math.max(x, 1e-9)) : x);
  const xs = all.map(([x]) => tx(x));
  const xmin = Math.min(...xs);
  const xmax = Math.max(...xs) > xmin ? Math.max(...xs) : xmin + 1;
  const ymax = Math.max(1, ...all.map(([, y]) => y)) * 1.15;
  const ymin = Math.min(0, ...all.map(([, y]) => y));
  const sx = (x: number) => x0 + ((tx(x) - xmin) / (xmax - xmin)) * (x1 - x0);
  const sy = (y: number) => y1 - ((y - ymin) / (ymax - ymin)) * (y1 - y0);
  const out = [`<g>`, `<text x="${x0}" y="${top + 25}" font-size="14" font-weight="bold">${title}</text>`];
  out.push(
    `<line x1="${x0}" y1="${y1}" x2="${x1}" y2="${y1}" stroke="#333"/>`,
    `<line x1="${x0}" y1="${y0}" x2="${x0}" y2="${y1}" stroke="#333"/>`,
  );
  for (let k = 0; k <= 4; k++) {
    const y = ymin + ((ymax - ymin) * k) / 4;
    out.push(
      `<line x1="${x0}" y1="${sy(y)}" x2="${x1}" y2="${sy(y)}" stroke="#eee"/>`,
      `<text x="${x0 - 6}" y="${sy(y) + 4}" text-anchor="end">${fmt(y)}</text>`,
    );
  }
  const ticks = [...new Set(series[0].points.map(([x]) => x))];
  for (const x of ticks) out.push(`<text x="${sx(x)}" y="${y1 + 17}" text-anchor="middle">${fmt(x)}</text>`);
  out.push(`<text x="${(x0 + x1) / 2}" y="${y1 + 38}" text-anchor="middle">${xLabel}</text>`);
  out.push(
    `<text transform="translate(${x0 - 50} ${(y0 + y1) / 2}) rotate(-90)" text-anchor="middle">${yLabel}</text>`,
  );
  series.forEach((s, i) => {
    const pts = s.points
      .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y))
      .map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`);
    out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${pts.join(' ')}"/>`);
    for (const p of pts) out.push(`<circle cx="${p.split(',')[0]}" cy="${p.split(',')[1]}" r="3" fill="${s.color}"/>`);
    const ly = y0 + 8 + i * 18;
    out.push(
      `<line x1="${x1 + 15}" y1="${ly}" x2="${x1 + 40}" y2="${ly}" stroke="${s.color}" stroke-width="3"/>`,
      `<text x="${x1 + 46}" y="${ly + 4}">${s.label}</text>`,
    );
  });
  for (const [x, y, text] of labels)
    if (Number.isFinite(x) && Number.isFinite(y))
      out.push(`<text x="${sx(x)}" y="${sy(y) - 8}" text-anchor="middle" font-size="10" fill="#555">${text}</text>`);
  out.push('</g>');
  return out.join('\n');
}
