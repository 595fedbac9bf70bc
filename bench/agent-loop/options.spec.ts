import { OptionsError, parseOptions } from './options';

describe('parseOptions', () => {
  it('defaults to the full run: 50 turns, three TPS settings, every mode', () => {
    const o = parseOptions([], '/repo');
    expect(o).toMatchObject({
      turns: 50,
      tps: [65, 1000, 4000],
      modes: ['http-stateless', 'http-previous', 'ws', 'grpc'],
      reps: 2,
      soloReps: 1,
      ttftMs: 50,
      prefixCaching: true,
      quick: false,
    });
    expect(parseOptions(['--prefix-caching', 'off'], '/r').prefixCaching).toBe(false);
    expect(parseOptions(['--solo', '0'], '/r').soloReps).toBe(0);
    expect(o.outDir).toBe('/repo/bench/results');
  });

  it('makes --quick short, and explicit options still win', () => {
    expect(parseOptions(['--quick'], '/r')).toMatchObject({
      turns: 12,
      tps: [1000],
      reps: 2,
      outputBytes: [2800, 8192],
      quick: true,
    });
    expect(parseOptions(['--quick', '--turns', '20', '--tps=65,4000'], '/r')).toMatchObject({
      turns: 20,
      tps: [65, 4000],
    });
  });

  it('keeps the report order of modes whatever the command line order', () => {
    expect(parseOptions(['--modes', 'ws,http-stateless'], '/r').modes).toEqual(['http-stateless', 'ws']);
  });

  it('rejects bad values with an error naming the option', () => {
    expect(() => parseOptions(['--turns', '1'], '/r')).toThrow(/--turns must be an integer from 2/);
    expect(() => parseOptions(['--modes', 'smoke'], '/r')).toThrow(/unknown mode 'smoke'/);
    expect(() => parseOptions(['--tps', 'fast'], '/r')).toThrow(/--tps/);
    expect(() => parseOptions(['--output-bytes', '9-3'], '/r')).toThrow(/--output-bytes/);
    expect(() => parseOptions(['--prefix-caching', 'maybe'], '/r')).toThrow(/--prefix-caching must be on or off/);
    expect(() => parseOptions(['--bogus', '1'], '/r')).toThrow(OptionsError);
  });
});
