import { crc32 } from 'node:zlib';
import { scanStream } from './stream-scan';
import { hasBase62Crc32, isPlaceholder, looksRandom } from './checksums';
import { INJECTION_RULES } from './injection-rules';
import { MAX_WINDOW } from './rule';
import { SECRET_RULES } from './secret-rules';
import { checksummedToken, FAKE_INJECTION_BY_RULE, FAKE_SECRET_BY_RULE, filler } from '../testing/fake-secrets';
import { cpuMsOf } from '@fastloop/test-kit';

const ids = (text: string, rules = SECRET_RULES) => scanStream(text, 0, rules).map((m) => m.rule.id);

describe('secret rules', () => {
  it('cover at least 25 credential kinds, each with a unique id and a window within the maximum', () => {
    expect(SECRET_RULES.length).toBeGreaterThanOrEqual(25);
    expect(new Set(SECRET_RULES.map((r) => r.id)).size).toBe(SECRET_RULES.length);
    for (const r of [...SECRET_RULES, ...INJECTION_RULES]) {
      expect(r.window).toBeLessThanOrEqual(MAX_WINDOW);
      expect(r.pattern.flags).toContain('g');
      expect(r.pattern.source).not.toMatch(/\(\?<[=!]/); // no lookbehind: it would read before the window
    }
    expect(Object.keys(FAKE_SECRET_BY_RULE).sort()).toEqual(SECRET_RULES.map((r) => r.id).sort());
  });

  it.each(SECRET_RULES.map((r) => [r.id, r] as const))('finds %s in running text, within its window', (id, rule) => {
    const secret = FAKE_SECRET_BY_RULE[id]();
    const text = `see: ${secret} .`;
    const found = scanStream(text, 0, [rule]);
    expect(found.length).toBeGreaterThanOrEqual(1);
    for (const m of found) expect(m.end - m.start).toBeLessThanOrEqual(rule.window);
    expect(ids(text)).toContain(id);
  });

  it('rejects GitHub and npm lookalikes whose CRC32 checksum does not match', () => {
    const good = checksummedToken('gh' + 'p_');
    expect(hasBase62Crc32(good)).toBe(true);
    const last = good.at(-1) === 'A' ? 'B' : 'A';
    expect(ids(`${good.slice(0, -1)}${last} `)).not.toContain('github-token');
    expect(ids(`${'np' + 'm_'}${filler(36)} `)).not.toContain('npm-token');
    expect(crc32('')).toBe(0);
  });

  it('allows documentation placeholders and test keys', () => {
    const allowed = [
      'AKIA' + 'IOSFODNN7' + 'EXAMPLE',
      'sk_' + 'test_' + filler(24),
      'postgres://user:' + 'password@localhost/db',
      'mysql://root:${DB_PASSWORD}@db/app',
      'api_key = "your-api-key-goes-here-xxxx"',
      'secret: <paste-your-secret-token-here>',
      'const tokens = profile.renderCompletion(items, 42);',
      'SAFETY_STATE_SECRET=0123456789abcdef',
    ];
    for (const text of allowed) expect([text, ids(` ${text} `)]).toEqual([text, []]);
  });

  it('tells placeholders and words from random values', () => {
    expect(isPlaceholder('your_token_here')).toBe(true);
    expect(isPlaceholder('aaaaaaaaaaaaaaaa')).toBe(true);
    expect(looksRandom('q8Zr2LmX0pVt7KcB4nWd')).toBe(true);
    expect(looksRandom('correcthorsebatterystaple')).toBe(false);
  });

  it('scans a hostile megabyte of near-misses in linear time', () => {
    const text = ('AKIA' + 'ghp_' + 'sk-' + 'eyJ' + 'postgres://a:' + 'secret=' + 'x'.repeat(40) + ' ').repeat(12_000);
    // Generous, and in CPU time (a loaded machine stretches wall time): proves no backtracking blow-up.
    expect(cpuMsOf(() => scanStream(text, 0, [...SECRET_RULES, ...INJECTION_RULES]))).toBeLessThan(10_000);
  });
});

describe('injection signals', () => {
  it.each(INJECTION_RULES.map((r) => [r.id, r] as const))('recognise %s', (id, rule) => {
    const found = scanStream(`x ${FAKE_INJECTION_BY_RULE[id]()} zzzz`, 0, [rule]);
    expect(found.length).toBeGreaterThanOrEqual(1);
    expect(found[0].rule.weight).toBeGreaterThan(0);
  });

  it('leave ordinary prose alone', () => {
    const prose =
      'The README explains how to ignore files with .gitignore and how the previous version sent logs to stdout.';
    expect(scanStream(prose, 0, INJECTION_RULES)).toEqual([]);
  });
});
