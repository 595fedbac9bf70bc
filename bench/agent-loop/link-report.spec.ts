import { linkRows, renderLinkReport } from './link-report';
import type { ModeSummary } from './summary';

const summary = (mode: string, rolloutMs: number, phase = 'interleaved') =>
  ({ mode, tps: 1000, phase, rolloutMs }) as unknown as ModeSummary;

describe('renderLinkReport', () => {
  it('puts each preset on a row with the WebSocket gain over both HTTP modes', () => {
    const rows = linkRows('home', {
      summaries: [
        summary('http-stateless', 10_000),
        summary('http-previous', 8_000),
        summary('ws', 7_000),
        summary('ws', 1, 'solo'),
      ],
    });
    expect(rows).toEqual([
      { preset: 'home', tps: 1000, rolloutMs: { 'http-stateless': 10_000, 'http-previous': 8_000, ws: 7_000 } },
    ]);
    const md = renderLinkReport(rows, '2026-12-01T00:00:00.000Z');
    expect(md).toContain(
      '| home (home broadband: 20 Mbit/s up, 100 Mbit/s down, 30 ms RTT) | 1000 | 10.0 | 8.00 | 7.00 | 30.0% | 12.5% |',
    );
    expect(md).toContain('up to 40% faster');
  });
});
