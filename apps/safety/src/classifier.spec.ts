import fc from 'fast-check';
import { DomainError } from '@fastloop/service-kit';
import { safetyV1 } from '@fastloop/proto';
import { Classifier } from './classifier';
import { RULES } from './rules';
import { awsAccessKeyId, FAKE_SECRET_BY_RULE, pemPrivateKey, stripeLiveSecretKey } from './testing/fake-secrets';

const { VERDICT_ALLOW, VERDICT_BLOCK } = safetyV1.Verdict;
const EMPTY = Buffer.alloc(0);
const classifier = new Classifier({ stateSecret: 'classifier-test-secret', maxItemBytes: 1 << 20 });

const item = (text: string, itemType = 'message', role = 'user'): safetyV1.SafetyItem => ({ itemType, role, text });

describe('Classifier', () => {
  it('allows a clean conversation and counts its items', () => {
    const res = classifier.classify({ state: EMPTY, items: [item('hello'), item('{"cmd":"ls"}', 'function_call', '')] });
    expect(res.verdict).toBe(VERDICT_ALLOW);
    expect(res.findings).toEqual([]);
    expect(res.itemsSeen).toBe(2);
  });

  it('scans every item type and role, reporting global item indexes', () => {
    const first = classifier.classify({ state: EMPTY, items: [item('hi'), item('ok', 'message', 'assistant')] });
    const res = classifier.classify({
      state: first.state,
      items: [item(`{"key":"${awsAccessKeyId()}"}`, 'function_call', ''), item(pemPrivateKey(), 'function_call_output', '')],
    });
    expect(res.verdict).toBe(VERDICT_BLOCK);
    expect(res.findings.map((f) => [f.ruleId, f.itemIndex])).toEqual([
      ['aws-access-key-id', 2],
      ['pem-private-key', 3],
    ]);
  });

  it('keeps blocking on later turns and reports the first finding first', () => {
    const blocked = classifier.classify({ state: EMPTY, items: [item(stripeLiveSecretKey())] });
    const later = classifier.classify({ state: blocked.state, items: [item('fine'), item(awsAccessKeyId())] });
    expect(later.verdict).toBe(VERDICT_BLOCK);
    expect(later.itemsSeen).toBe(3);
    expect(later.findings.map((f) => [f.ruleId, f.itemIndex])).toEqual([
      ['stripe-live-secret-key', 0],
      ['aws-access-key-id', 2],
    ]);
    const quiet = classifier.classify({ state: later.state, items: [] });
    expect(quiet.findings.map((f) => f.ruleId)).toEqual(['stripe-live-secret-key']);
  });

  it('never echoes the matched secret in finding messages', () => {
    for (const make of Object.values(FAKE_SECRET_BY_RULE)) {
      const secret = make();
      const res = classifier.classify({ state: EMPTY, items: [item(secret)] });
      for (const f of res.findings) {
        expect(f.message).toContain(f.ruleId);
        for (const line of secret.split('\n')) if (line.length >= 8) expect(f.message).not.toContain(line);
      }
    }
  });

  it('refuses an item over the byte limit instead of scanning part of it', () => {
    const small = new Classifier({ stateSecret: 'classifier-test-secret', maxItemBytes: 10 });
    expect(small.classify({ state: EMPTY, items: [item('é'.repeat(5))] }).itemsSeen).toBe(1);
    const err = (() => {
      try {
        small.classify({ state: EMPTY, items: [item('ok'), item('é'.repeat(6))] });
      } catch (e) {
        return e as DomainError;
      }
    })();
    expect(err).toBeInstanceOf(DomainError);
    expect(err?.code).toBe('safety_item_too_large');
    expect(err?.message).toContain('item 1 has 12 bytes');
  });

  it('refuses a state from a classifier with another rule set', () => {
    const fewer = new Classifier({ stateSecret: 'classifier-test-secret', maxItemBytes: 1 << 20, rules: RULES.slice(1) });
    const state = fewer.classify({ state: EMPTY, items: [item('x')] }).state;
    expect(() => classifier.classify({ state, items: [] })).toThrow(expect.objectContaining({ code: 'invalid_safety_state' }));
  });
});

// --- incremental == full ---------------------------------------------------------------------

const ITEM_TYPES = ['message', 'function_call', 'function_call_output', 'reasoning'] as const;
const ROLES = ['user', 'assistant', 'developer', 'system'] as const;
const ruleIds = Object.keys(FAKE_SECRET_BY_RULE);

/** Random text, sometimes with fake secrets of random kinds at random positions. */
const textArb = fc
  .tuple(fc.string({ maxLength: 40 }), fc.array(fc.tuple(fc.constantFrom(...ruleIds), fc.string({ maxLength: 20 })), { maxLength: 2 }))
  .map(([head, parts]) => head + parts.map(([rule, tail]) => ` ${FAKE_SECRET_BY_RULE[rule]()} ${tail}`).join(''));

const itemArb = fc
  .tuple(fc.constantFrom(...ITEM_TYPES), fc.constantFrom(...ROLES), fc.oneof({ weight: 4, arbitrary: fc.string({ maxLength: 60 }) }, { weight: 1, arbitrary: textArb }))
  .map(([itemType, role, text]) => ({ itemType, role: itemType === 'message' ? role : '', text }));

/** A conversation and the cut points that split it into turns (empty turns included). */
const splitConversationArb = fc
  .array(itemArb, { maxLength: 14 })
  .chain((items) => fc.tuple(fc.constant(items), fc.array(fc.nat(items.length), { maxLength: 6 })));

function turnsOf<T>(items: readonly T[], cuts: readonly number[]): T[][] {
  const bounds = [0, ...[...cuts].sort((a, b) => a - b), items.length];
  return bounds.slice(1).map((end, i) => items.slice(bounds[i], end));
}

describe('Classifier, incremental versus full', () => {
  it('gives the same verdict, items seen, state and first finding whether classified in one call or turn by turn', () => {
    fc.assert(
      fc.property(splitConversationArb, ([items, cuts]) => {
        const full = classifier.classify({ state: EMPTY, items });
        let state: Buffer = EMPTY;
        let last: safetyV1.ClassifyResponse = classifier.classify({ state, items: [] });
        const collected: safetyV1.Finding[] = [];
        for (const turn of turnsOf(items, cuts)) {
          last = classifier.classify({ state, items: turn });
          const firstNew = last.itemsSeen - turn.length;
          collected.push(...last.findings.filter((f) => f.itemIndex >= firstNew));
          state = last.state;
        }
        expect(last.verdict).toBe(full.verdict);
        expect(last.itemsSeen).toBe(full.itemsSeen);
        expect(last.state.equals(full.state)).toBe(true);
        expect(last.findings[0]).toEqual(full.findings[0]);
        expect(collected).toEqual(full.findings);
      }),
      { numRuns: 300 },
    );
  });

  it('blocks exactly the conversations that contain a fake secret', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ maxLength: 30 }), fc.option(fc.constantFrom(...ruleIds))), { maxLength: 8 }), (parts) => {
        const items = parts.map(([noise, rule]) => item(rule ? `${noise} ${FAKE_SECRET_BY_RULE[rule]()} .` : noise.replace(/[A-Za-z0-9]/g, '')));
        const res = classifier.classify({ state: EMPTY, items });
        expect(res.verdict).toBe(parts.some(([, rule]) => rule) ? VERDICT_BLOCK : VERDICT_ALLOW);
      }),
    );
  });
});
