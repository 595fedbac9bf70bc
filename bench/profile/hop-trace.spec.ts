import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HopTrace } from '@fastloop/service-kit';
import { medians, parseHops, timelines } from './hop-trace';

describe('hop trace', () => {
  it('splits the marks of several processes into turns, each mark timed from its turn start', () => {
    const edge = '1000 edge.turn\n1100 edge.classify.sent\n5000 edge.turn\n5300 edge.classify.sent\n';
    const safety = '1600 safety.classify.start\n1900 safety.classify.end\n5400 safety.classify.start\n';
    const early = '900 worker.generate.arrived\n';
    const turns = timelines([...parseHops(edge), ...parseHops(safety), ...parseHops(early)]);
    expect(turns.map((t) => Object.fromEntries(t))).toEqual([
      { 'edge.turn': 0, 'edge.classify.sent': 100, 'safety.classify.start': 600, 'safety.classify.end': 900 },
      { 'edge.turn': 0, 'edge.classify.sent': 300, 'safety.classify.start': 400 },
    ]);
    expect(medians(turns)).toEqual([
      { label: 'edge.turn', medianUs: 0, turns: 2 },
      { label: 'edge.classify.sent', medianUs: 200, turns: 2 },
      { label: 'safety.classify.start', medianUs: 500, turns: 2 },
      { label: 'safety.classify.end', medianUs: 900, turns: 1 },
    ]);
  });

  it('starts each turn at the client when the client traced too', () => {
    const client = '900 client.start\n1300 client.first_item\n4800 client.start\n';
    const edge = '1000 edge.turn\n5000 edge.turn\n';
    const turns = timelines([...parseHops(edge), ...parseHops(client)]);
    expect(turns.map((t) => Object.fromEntries(t))).toEqual([
      { 'client.start': 0, 'edge.turn': 100, 'client.first_item': 400 },
      { 'client.start': 0, 'edge.turn': 200 },
    ]);
  });

  it('keeps only the first mark of a label in a turn', () => {
    const turns = timelines(parseHops('10 edge.turn\n20 safety.output.start\n50 safety.output.start\n'));
    expect(turns[0].get('safety.output.start')).toBe(10);
  });

  it('writes nothing when off, and one line per mark when on', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hops-'));
    try {
      const off = new HopTrace(undefined);
      off.mark('edge.turn');
      expect(off.enabled).toBe(false);
      const on = new HopTrace(dir);
      on.mark('edge.turn');
      on.mark('edge.classify.sent');
      on.write();
      const marks = parseHops(readFileSync(join(dir, `${process.pid}.hops`), 'utf8'));
      expect(marks.map((m) => m.label)).toEqual(['edge.turn', 'edge.classify.sent']);
      expect(marks[1].us).toBeGreaterThanOrEqual(marks[0].us);
      // Wall time in µs: within a minute of now.
      expect(Math.abs(marks[0].us / 1000 - Date.now())).toBeLessThan(60_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
