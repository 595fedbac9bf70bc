import { randomBytes } from 'node:crypto';
import { DEV_REASONING_KEYS, parseReasoningKeys, ReasoningSeal, SealError } from './reasoning-seal';

const keyA = { kid: 'a', key: randomBytes(32) };
const keyB = { kid: 'b', key: randomBytes(32) };

describe('ReasoningSeal', () => {
  it('opens what it sealed for the same tenant, unicode included', () => {
    const seal = new ReasoningSeal([keyA]);
    const text = 'Think: 2+2 → 4 ✓\nthen answer.';
    expect(seal.open(seal.seal(text, 't1'), 't1')).toBe(text);
  });

  it('never seals the same text to the same blob (random IV)', () => {
    const seal = new ReasoningSeal([keyA]);
    expect(seal.seal('x', 't')).not.toBe(seal.seal('x', 't'));
  });

  it('does not contain the plaintext', () => {
    const seal = new ReasoningSeal([keyA]);
    expect(seal.seal('secret chain of thought', 't')).not.toContain('secret');
  });

  it('refuses a blob made for another tenant', () => {
    const seal = new ReasoningSeal([keyA]);
    expect(() => seal.open(seal.seal('x', 't1'), 't2')).toThrow(SealError);
  });

  it('refuses a blob with one byte changed', () => {
    const seal = new ReasoningSeal([keyA]);
    const blob = seal.seal('some reasoning', 't');
    const [v, kid, payload] = blob.split('.');
    const raw = Buffer.from(payload, 'base64url');
    raw[raw.length - 1] ^= 1;
    expect(() => seal.open(`${v}.${kid}.${raw.toString('base64url')}`, 't')).toThrow(/authentication/);
  });

  it('refuses a truncated blob', () => {
    const seal = new ReasoningSeal([keyA]);
    const blob = seal.seal('some reasoning', 't');
    expect(() => seal.open(blob.slice(0, 20), 't')).toThrow(SealError);
    expect(() => seal.open(blob.slice(0, -4), 't')).toThrow(SealError);
  });

  it('refuses an unknown key id, an unknown version and garbage', () => {
    const seal = new ReasoningSeal([keyA]);
    const other = new ReasoningSeal([keyB]);
    expect(() => seal.open(other.seal('x', 't'), 't')).toThrow(/unknown key/);
    expect(() => seal.open(seal.seal('x', 't').replace(/^fl1/, 'fl2'), 't')).toThrow(/version/);
    expect(() => seal.open('gAAAAABnotours', 't')).toThrow(SealError);
  });

  it('refuses a blob whose key id was swapped for another known key', () => {
    const sameKey = new ReasoningSeal([keyA, { kid: 'c', key: keyA.key }]);
    const blob = sameKey.seal('x', 't');
    expect(() => sameKey.open(blob.replace('.a.', '.c.'), 't')).toThrow(/authentication/);
  });

  it('rotates: the new first key seals, an older key still opens', () => {
    const before = new ReasoningSeal([keyA]);
    const after = new ReasoningSeal([keyB, keyA]);
    const old = before.seal('kept', 't');
    expect(after.open(old, 't')).toBe('kept');
    expect(after.seal('new', 't').split('.')[1]).toBe('b');
  });

  it('rejects keys of the wrong length or with bad ids', () => {
    expect(() => new ReasoningSeal([{ kid: 'a', key: randomBytes(16) }])).toThrow(/32 bytes/);
    expect(() => new ReasoningSeal([{ kid: 'a.b', key: randomBytes(32) }])).toThrow(/key id/);
    expect(() => new ReasoningSeal([])).toThrow();
  });
});

describe('parseReasoningKeys', () => {
  it('reads comma-separated kid:base64key entries in order', () => {
    const keys = parseReasoningKeys(`k2:${keyB.key.toString('base64')}, k1:${keyA.key.toString('base64')}`);
    expect(keys.map((k) => k.kid)).toEqual(['k2', 'k1']);
    expect(keys[1].key.equals(keyA.key)).toBe(true);
  });

  it('refuses an entry without a key id', () => {
    expect(() => parseReasoningKeys('abc')).toThrow(/kid:base64key/);
  });

  it('has a usable development default', () => {
    const seal = new ReasoningSeal(parseReasoningKeys(DEV_REASONING_KEYS));
    expect(seal.open(seal.seal('x', 't'), 't')).toBe('x');
  });
});
