import { safetyV1 } from '@fastloop/proto';
import { DEFAULT_ACTIONS, PolicyBook } from '../policy';
import { evasions, lookalikes } from '../testing/evasions';
import { testClassifier } from '../testing/test-classifier';
import { scanStream } from './stream-scan';

// Issue 17: a secret or an injection hidden by encoding or invisible characters was caught in 0
// of 12 tries. The rules read the normalised view (normalise.ts) and decode bounded base64/hex
// runs once (encoded-rules.ts); every case here must be found, over the original text's positions.
const policy = new PolicyBook({
  policies: { tenants: {}, models: {} },
  defaultActions: DEFAULT_ACTIONS,
  injectionThreshold: 10,
}).resolve('', '');
const toolRules = [...policy.rules, ...policy.injectionRules];
const cases = evasions();

describe('evasions of the secret and injection rules', () => {
  it('cover the issue’s twelve kinds and more, and every one is caught', () => {
    const caught = cases.filter((c) => {
      const text = c.before + c.hidden + c.after;
      const rules = c.stream === 'tool' ? toolRules : policy.rules;
      return scanStream(text, 0, rules).some((m) => m.rule.id === c.rule);
    });
    expect(cases.length).toBeGreaterThanOrEqual(12);
    // The count the README quotes.
    expect(`${caught.length}/${cases.length}`).toBe(`${cases.length}/${cases.length}`);
  });

  it.each(cases.map((c) => [c.kind, c] as const))('finds %s over the disguised value itself', (_kind, c) => {
    const text = c.before + c.hidden + c.after;
    const rules = c.stream === 'tool' ? toolRules : policy.rules;
    const found = scanStream(text, 0, rules).filter((m) => m.rule.id === c.rule);
    expect(found.length).toBeGreaterThanOrEqual(1);
    // Within the disguised value, in original positions: what redaction masks.
    const [first] = found;
    expect(first.start).toBeGreaterThanOrEqual(c.before.length);
    expect(first.end).toBeLessThanOrEqual(c.before.length + c.hidden.length);
    expect(first.end - first.start).toBeGreaterThan(c.hidden.length / 2);
  });

  it.each(lookalikes().map((l) => [l.kind, l.text] as const))(
    'takes nothing in %s for a secret or an injection',
    (_kind, text) => {
      expect(scanStream(` ${text} `, 0, toolRules).map((m) => m.rule.id)).toEqual([]);
    },
  );

  it('blocks a disguised key and masks exactly its characters when the action is redact', () => {
    const c = cases.find((e) => e.kind === 'zero-width space inside a key')!;
    const text = c.before + c.hidden + c.after;
    const redacting = testClassifier({ actions: { secret: 'redact' } });
    const r = redacting.classify({
      state: Buffer.alloc(0),
      items: [{ itemType: 'message', role: 'user', text, source: safetyV1.ItemSource.ITEM_SOURCE_INPUT }],
    });
    const f = r.findings.find((x) => x.ruleId === c.rule)!;
    expect(f.action).toBe(safetyV1.Action.ACTION_REDACT);
    expect(text.slice(0, f.start) + text.slice(f.end)).toBe(c.before + c.after);
  });
});
