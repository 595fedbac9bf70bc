import { formatLogLine } from './log-format';

describe('formatLogLine', () => {
  it('renders a pino line as time, level, message and extra fields behind the service name', () => {
    const line = JSON.stringify({
      level: 30,
      time: '2025-01-01T12:34:56.789Z',
      pid: 1,
      service: 'edge',
      msg: 'ready',
      grpcPort: 50051,
      mode: 'sim',
    });
    expect(formatLogLine('edge', line, { colour: false })).toBe(
      'edge      | 12:34:56 INFO  ready grpcPort=50051 mode=sim',
    );
  });

  it('adds an error stack on indented lines', () => {
    const line = JSON.stringify({ level: 50, msg: 'failed', err: { message: 'nope', stack: 'Error: nope\n    at x' } });
    expect(formatLogLine('router', line, { colour: false }).split('\n')).toEqual([
      'router    | ERROR failed',
      'router    |   Error: nope',
      'router    |       at x',
    ]);
  });

  it('shows anything that is not a JSON object as it is', () => {
    expect(formatLogLine('safety', 'node:internal/modules/cjs/loader:1228', { colour: false })).toBe(
      'safety    | node:internal/modules/cjs/loader:1228',
    );
    expect(formatLogLine('safety', '{not json', { colour: false })).toBe('safety    | {not json');
  });

  it('quotes values with spaces and cuts long ones', () => {
    const out = formatLogLine('edge', JSON.stringify({ level: 30, msg: 'm', a: 'two words', b: 'x'.repeat(500) }), {
      colour: false,
    });
    expect(out).toContain('a="two words"');
    expect(out).toContain(`b=${'x'.repeat(200)}…`);
  });

  it('colours only when asked', () => {
    const line = JSON.stringify({ level: 40, msg: 'slow' });
    expect(formatLogLine('edge', line, { colour: true })).toContain('\u001b[33m');
    expect(formatLogLine('edge', line, { colour: false })).not.toContain('\u001b[');
  });
});
