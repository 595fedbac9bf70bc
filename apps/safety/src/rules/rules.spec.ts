import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { encodedInjectionRule, encodedSecretRule } from './encoded-rules';
import { scanStream, scanStreamSteps, tailOf, type StreamMatch } from './stream-scan';
import { EVASION_CHARACTERS, evasions, RLO, SOFT_HYPHEN, sprinkle, ZWSP } from '../testing/evasions';
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

describe('the scan of the normalised view (issue 17)', () => {
  const rules = [
    ...SECRET_RULES,
    ...INJECTION_RULES,
    encodedSecretRule(SECRET_RULES),
    encodedInjectionRule(INJECTION_RULES),
  ];
  const planted = [
    ...Object.values(FAKE_SECRET_BY_RULE).map((make) => make()),
    ...Object.values(FAKE_INJECTION_BY_RULE).map((make) => make()),
    ...evasions().map((e) => e.hidden),
    // Windows of ~160 and ~360 original characters: found, and too wide to be seen.
    sprinkle(FAKE_SECRET_BY_RULE['github-token'](), ZWSP.repeat(3)),
    sprinkle(FAKE_SECRET_BY_RULE['github-token'](), ZWSP.repeat(8)),
    // A tail cut inside an emoji's surrogate pair, then an encoded key: its start is on neither path.
    '\u{1f600}' + Buffer.from(FAKE_SECRET_BY_RULE['github-token']()).toString('base64'),
  ];
  const unit = fc.constantFrom(
    ...'aZ9 _-=:\n'.split(''),
    '\u{1f600}',
    ...EVASION_CHARACTERS,
    'ｓ',
    '𝐀',
    'ﬁ',
    '\u{e0041}',
    ZWSP.repeat(60),
  );
  const textArb = fc
    .array(fc.oneof(fc.string({ unit, maxLength: 30 }), fc.constantFrom(...planted)), { maxLength: 8 })
    .map((parts) => parts.join(''));
  const same = (m: StreamMatch) => `${m.rule.id}@${m.start}-${m.end}${m.provisional ? '?' : ''}`;

  it('finds, from a carried tail plus the new text, exactly the full scan’s matches from the tail on', () => {
    fc.assert(
      fc.property(textArb, fc.nat(), (text, cut) => {
        const before = text.slice(0, cut % (text.length + 1));
        const after = text.slice(before.length);
        const tail = tailOf(before);
        const base = before.length - tail.length;
        const whole = scanStream(before + after, 0, rules).filter((m) => m.start - (m.rule.lead ?? 0) >= base);
        expect(scanStream(tail + after, base, rules).map(same)).toEqual(whole.map(same));
        // Settled before the new text came: found the same then, since a match reads its window only.
        const earlier = scanStream(before, 0, rules).filter((m) => !m.provisional);
        const settled = scanStream(before + after, 0, rules).filter((m) => m.start - (m.rule.lead ?? 0) < base);
        expect(settled.map(same)).toEqual(earlier.filter((m) => m.start - (m.rule.lead ?? 0) < base).map(same));
      }),
      { numRuns: 300 },
    );
  });

  it('finds the same in slices as in one scan', () => {
    fc.assert(
      fc.property(textArb, fc.integer({ min: 1, max: 300 }), (text, slice) => {
        const steps = scanStreamSteps(text, 7, rules, slice);
        let step = steps.next();
        while (!step.done) step = steps.next();
        expect(step.value.map(same)).toEqual(scanStream(text, 7, rules).map(same));
      }),
      { numRuns: 300 },
    );
  });

  it('starts no match inside a surrogate pair, where a carried tail may begin', () => {
    const head = `p \u{1f600}${Buffer.from(FAKE_SECRET_BY_RULE['github-token']()).toString('base64')} `;
    // The tail (last 255 characters) begins at the emoji's second half, just before the encoded key.
    const before = head + 'y'.repeat(255 + 3 - head.length);
    const tail = tailOf(before);
    expect(tail.charCodeAt(0)).toBe(0xde00);
    const base = before.length - tail.length;
    const whole = scanStream(before + ' z', 0, rules).filter((m) => m.start - (m.rule.lead ?? 0) >= base);
    expect(scanStream(tail + ' z', base, rules).map(same)).toEqual(whole.map(same));
  });

  it('places a match on the original text: a key with a zero-width space inside is one match over it', () => {
    const key = FAKE_SECRET_BY_RULE['github-token']();
    const text = `x ${key.slice(0, 10)}${ZWSP}${key.slice(10)} y`;
    const [m] = scanStream(text, 100, SECRET_RULES);
    expect([m.rule.id, m.start, m.end]).toEqual(['github-token', 102, 102 + key.length + 1]);
  });

  it('does not see a value whose 256-character window is mostly invisible characters', () => {
    const key = FAKE_SECRET_BY_RULE['github-token']();
    const hidden = sprinkle(key, ZWSP.repeat(8));
    expect(scanStream(`x ${hidden} y`, 0, SECRET_RULES)).toEqual([]);
    // What a model would read there is flagged anyway: a run of zero-width characters.
    expect(scanStream(hidden, 0, INJECTION_RULES).map((m) => m.rule.id)).toContain('hidden-zero-width');
  });

  it('normalises a megabyte of mixed evasions in linear time', () => {
    const text = ('ｓｋ－' + ZWSP + 'abc' + SOFT_HYPHEN + '𝐀' + RLO + 'de\u0301 ' + 'QUJD'.repeat(5) + ' ').repeat(
      30_000,
    );
    expect(cpuMsOf(() => scanStream(text, 0, rules))).toBeLessThan(20_000);
  });
});
