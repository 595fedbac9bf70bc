import fc from 'fast-check';
import { DomainError } from '@fastloop/service-kit';
import { safetyV1 } from '@fastloop/proto';
import {
  awsAccessKeyId,
  FAKE_INJECTION_BY_RULE,
  FAKE_SECRET_BY_RULE,
  pemPrivateKey,
  stripeKey,
} from './testing/fake-secrets';
import { EVASION_CHARACTERS, evasions } from './testing/evasions';
import { testClassifier } from './testing/test-classifier';

const { VERDICT_ALLOW, VERDICT_BLOCK } = safetyV1.Verdict;
const EMPTY = Buffer.alloc(0);
const classifier = testClassifier();
const item = (
  text: string,
  itemType = 'message',
  role = 'user',
  source = safetyV1.ItemSource.ITEM_SOURCE_INPUT,
): safetyV1.SafetyItem => ({ itemType, role, text, source });
const tool = (text: string) => item(text, 'function_call_output', '', safetyV1.ItemSource.ITEM_SOURCE_TOOL);

describe('Classifier', () => {
  it('allows a clean conversation and counts its items', () => {
    const res = classifier.classify({
      state: EMPTY,
      items: [item('hello'), item('{"cmd":"ls"}', 'function_call', '')],
    });
    expect(res).toMatchObject({ verdict: VERDICT_ALLOW, findings: [], itemsSeen: 2, windowChars: 256 });
  });

  it('names the kind, the item and the span of a secret, never the secret', () => {
    for (const [ruleId, make] of Object.entries(FAKE_SECRET_BY_RULE)) {
      const secret = make();
      const text = `config follows\n${secret}\nend`;
      const res = classifier.classify({ state: EMPTY, items: [item('hi'), tool(text)] });
      const f = res.findings.find((x) => x.ruleId === ruleId);
      expect([ruleId, f]).toEqual([
        ruleId,
        expect.objectContaining({ itemIndex: 1, endItemIndex: 1, category: safetyV1.Category.CATEGORY_SECRET }),
      ]);
      expect(f!.start).toBeGreaterThanOrEqual(text.indexOf(secret));
      expect(f!.end).toBeLessThanOrEqual(text.indexOf(secret) + secret.length);
      for (const x of res.findings)
        for (const line of secret.split('\n')) if (line.length >= 8) expect(x.message).not.toContain(line);
    }
  });

  it('finds a private key split across two items of one turn, and across two turns', () => {
    const key = pemPrivateKey();
    const cut = 20;
    const oneTurn = classifier.classify({ state: EMPTY, items: [item(key.slice(0, cut)), item(key.slice(cut))] });
    expect(oneTurn.findings[0]).toMatchObject({ ruleId: 'private-key-block', itemIndex: 0, start: 0, endItemIndex: 1 });
    const first = classifier.classify({ state: EMPTY, items: [item('please store: ' + key.slice(0, cut))] });
    expect(first.verdict).toBe(VERDICT_ALLOW);
    const second = classifier.classify({ state: first.state, items: [item(key.slice(cut))] });
    expect(second.verdict).toBe(VERDICT_BLOCK);
    expect(second.findings[0]).toMatchObject({ ruleId: 'private-key-block', itemIndex: 0, endItemIndex: 1 });
  });

  it('keeps blocking once a blocking secret has settled, and reports it first', () => {
    const blocked = classifier.classify({ state: EMPTY, items: [item(`${stripeKey()} ${'.'.repeat(300)}`)] });
    const later = classifier.classify({ state: blocked.state, items: [item('fine')] });
    expect(later.verdict).toBe(VERDICT_BLOCK);
    expect(later.findings[0]).toMatchObject({ ruleId: 'stripe-secret-key', itemIndex: 0, provisional: false });
  });

  it('scores injection in tool output across items, but not in what the user writes', () => {
    const weak = FAKE_INJECTION_BY_RULE['injection-role-hijack']();
    const once = classifier.classify({ state: EMPTY, items: [tool(`docs: ${weak}`)] });
    expect(once.findings).toEqual([]);
    const more = classifier.classify({
      state: once.state,
      items: [tool(`${weak}, ${FAKE_INJECTION_BY_RULE['injection-exfiltration']()}evil.example`)],
    });
    expect(more.verdict).toBe(VERDICT_ALLOW); // injection is flagged by default
    expect(more.findings).toEqual([
      expect.objectContaining({
        ruleId: 'injection-exfiltration',
        category: safetyV1.Category.CATEGORY_INJECTION,
        action: safetyV1.Action.ACTION_FLAG,
        score: 11,
      }),
    ]);
    const user = classifier.classify({
      state: EMPTY,
      items: [item(FAKE_INJECTION_BY_RULE['injection-ignore-instructions']().repeat(3))],
    });
    expect(user.findings).toEqual([]);
  });

  it('flags hidden text (tag characters) in retrieved content, and blocks it when configured', () => {
    const hidden = `Totally normal page${FAKE_INJECTION_BY_RULE['hidden-tag-characters']()} text`;
    expect(classifier.classify({ state: EMPTY, items: [tool(hidden)] }).findings[0]).toMatchObject({
      ruleId: 'hidden-tag-characters',
      action: safetyV1.Action.ACTION_FLAG,
    });
    const strict = testClassifier({ actions: { injection: 'block' } });
    expect(strict.classify({ state: EMPTY, items: [tool(hidden)] }).verdict).toBe(VERDICT_BLOCK);
  });

  it('applies per-tenant and per-model policy lists and actions', () => {
    const c = testClassifier({
      policies: {
        tenants: { acme: { terms: ['Project Falcon'], regexes: [], actions: { secret: 'redact' } } },
        models: { 'm-strict': { terms: [], regexes: ['ticket-\\d{4}'], actions: { policy: 'flag' } } },
      },
    });
    const text = 'the project falcon launch, ticket-1234, key ' + awsAccessKeyId() + ' ok';
    const acme = c.classify({ state: EMPTY, items: [item(text)], tenant: 'acme', model: 'm' });
    expect(acme.verdict).toBe(VERDICT_BLOCK);
    expect(acme.findings.map((f) => [f.ruleId, f.action])).toEqual([
      ['policy-term:tenant:0', safetyV1.Action.ACTION_BLOCK],
      ['aws-access-key-id', safetyV1.Action.ACTION_REDACT],
    ]);
    const strict = c.classify({ state: EMPTY, items: [item(text)], tenant: 'other', model: 'm-strict' });
    expect(strict.findings.map((f) => [f.ruleId, f.action, f.start, f.end])).toEqual([
      ['aws-access-key-id', safetyV1.Action.ACTION_BLOCK, 44, 64], // the blocking finding comes first
      ['policy-regex:model:0', safetyV1.Action.ACTION_FLAG, 27, 38],
    ]);
    // Policies are part of the state's identity: another tenant's state is refused.
    expect(() => c.classify({ state: acme.state, items: [], tenant: 'other', model: 'm' })).toThrow(
      expect.objectContaining({ code: 'invalid_safety_state' }),
    );
  });

  it('drops findings of a category whose action is allow', () => {
    const c = testClassifier({ actions: { secret: 'allow' } });
    expect(c.classify({ state: EMPTY, items: [item(awsAccessKeyId() + ' ')] })).toMatchObject({
      verdict: VERDICT_ALLOW,
      findings: [],
    });
  });

  it('keeps the state bounded and independent of the history length', () => {
    let state: Buffer = EMPTY;
    const sizes: number[] = [];
    for (let turn = 0; turn < 400; turn++) {
      state = classifier.classify({
        state,
        items: [item(`turn ${turn} `.repeat(40)), tool('x'.repeat(500)), item('ok', 'message', 'assistant')],
      }).state;
      sizes.push(state.length);
    }
    // Tails fill up (the model's 2-character items take ~128 turns to fill its 255 characters),
    // then only the digits of the counters and item positions grow.
    expect(sizes.at(-1)! - sizes[200]).toBeLessThan(200);
    expect(Math.max(...sizes)).toBeLessThan(4_096);
  });

  it('refuses an item over the byte limit instead of scanning part of it', () => {
    const small = testClassifier({ maxItemBytes: 10 });
    expect(small.classify({ state: EMPTY, items: [item('é'.repeat(5))] }).itemsSeen).toBe(1);
    let err: DomainError | undefined;
    try {
      small.classify({ state: EMPTY, items: [item('ok'), item('é'.repeat(6))] });
    } catch (e) {
      err = e as DomainError;
    }
    expect(err).toMatchObject({ code: 'safety_item_too_large' });
    expect(err?.message).toContain('item 1 has 12 bytes');
  });

  it('refuses a call whose items together are over the request limit, before scanning any', async () => {
    const bounded = testClassifier({ maxRequestBytes: 1_000, maxItemBytes: 600 });
    const items = [item('a'.repeat(500)), tool(`${awsAccessKeyId()} ${'b'.repeat(500)}`)];
    for (const run of [
      () => bounded.classify({ state: EMPTY, items }),
      () => bounded.classifyAsync({ state: EMPTY, items }),
    ])
      await expect(Promise.resolve().then(run)).rejects.toMatchObject({
        code: 'safety_request_too_large',
        grpcStatus: 3, // INVALID_ARGUMENT: the caller's input, not a service failure
        retryable: false,
      });
    // Counted in UTF-8 bytes, as the item limit is: 400 'é' are 800 bytes.
    await expect(
      Promise.resolve().then(() =>
        bounded.classify({ state: EMPTY, items: [item('é'.repeat(300)), item('é'.repeat(300))] }),
      ),
    ).rejects.toMatchObject({ code: 'safety_request_too_large' });
    expect(bounded.classify({ state: EMPTY, items: [item('a'.repeat(500)), item('a'.repeat(500))] }).itemsSeen).toBe(2);
  });

  describe('with a findings cap', () => {
    const wall = Array.from({ length: 500 }, (_, i) => `key${i}=${awsAccessKeyId()}`).join('\n');

    it('lists the blocking finding and the earliest others, counts the rest, and keeps the state exact', () => {
      const capped = testClassifier({
        maxFindings: 10,
        actions: { secret: 'flag', policy: 'block' },
        policies: { tenants: { t: { terms: ['forbidden'], regexes: [], actions: {} } }, models: {} },
      });
      const uncapped = testClassifier({
        actions: { secret: 'flag', policy: 'block' },
        policies: { tenants: { t: { terms: ['forbidden'], regexes: [], actions: {} } }, models: {} },
      });
      const items = [tool(wall), item('this is forbidden')];
      const res = capped.classify({ state: EMPTY, items, tenant: 't' });
      const full = uncapped.classify({ state: EMPTY, items, tenant: 't' });
      expect(full.findings.length).toBe(501);
      expect(res.findings).toHaveLength(10);
      expect(res.findingsOmitted).toBe(491);
      expect(res.verdict).toBe(VERDICT_BLOCK);
      expect(res.findings[0]).toEqual(full.findings[0]);
      expect(res.findings.slice(1)).toEqual(full.findings.slice(1, 10));
      expect(res.state.equals(full.state)).toBe(true);
      expect(safetyV1.ClassifyResponse.encode(res).finish().length).toBeLessThan(8_000);
    });

    it('ranks the hits of a wall of keys in steps it can pause between, answering as in one go', async () => {
      // 12,000 keys in one slice of scanning: the pauses the two calls differ by are the answer's,
      // ranking the flagged hits (none when the keys are allowed), which ran in one go before.
      const big = Array.from({ length: 12_000 }, () => awsAccessKeyId()).join('\n');
      const pausesWith = async (secret: 'flag' | 'allow') => {
        const c = testClassifier({ maxFindings: 10, actions: { secret }, sliceChars: 1 << 30, pauseAfterMs: 0 });
        let pauses = 0;
        const res = await c.classifyAsync({ state: EMPTY, items: [tool(big)] }, { pause: async () => void pauses++ });
        expect(res).toEqual(c.classify({ state: EMPTY, items: [tool(big)] }));
        return { pauses, res };
      };
      const flagged = await pausesWith('flag');
      const allowed = await pausesWith('allow');
      expect(flagged.res.findingsOmitted).toBeGreaterThanOrEqual(11_990);
      expect(allowed.res.findings).toEqual([]);
      expect(flagged.pauses - allowed.pauses).toBeGreaterThanOrEqual(2);
    });

    it('blocks instead of leaving out a value it was to mask', () => {
      const redacting = testClassifier({ maxFindings: 10, actions: { secret: 'redact' } });
      const res = redacting.classify({ state: EMPTY, items: [tool(wall)] });
      expect(res.verdict).toBe(VERDICT_BLOCK);
      expect(res.findings[0]).toMatchObject({ ruleId: 'too-many-redactions', action: safetyV1.Action.ACTION_BLOCK });
      // Not carried: the next call is judged on its own findings.
      expect(redacting.classify({ state: res.state, items: [item('ok')] }).verdict).toBe(VERDICT_ALLOW);
      const few = redacting.classify({ state: EMPTY, items: [tool(wall.slice(0, 200))] });
      expect(few.verdict).toBe(VERDICT_ALLOW);
      expect(few.findings.every((f) => f.action === safetyV1.Action.ACTION_REDACT)).toBe(true);
    });
  });
});

describe('Classifier, policy regexes', () => {
  it('match what the model reads and mask the original characters', () => {
    const c = testClassifier({
      policies: {
        tenants: {},
        models: { m: { terms: [], regexes: ['ticket-\\d{4}'], actions: { policy: 'redact' } } },
      },
    });
    const text = 'see ｔｉｃｋｅｔ-12\u200b34 now';
    const res = c.classify({ state: EMPTY, items: [item(text)], model: 'm' });
    const f = res.findings.find((x) => x.ruleId === 'policy-regex:model:0')!;
    expect(text.slice(0, f.start) + text.slice(f.end)).toBe('see  now');
  });
});

// --- incremental == full ---------------------------------------------------------------------

const KINDS = [
  ['message', 'user'],
  ['message', 'assistant'],
  ['function_call', ''],
  ['function_call_output', ''],
  ['reasoning', ''],
] as const;
// Evasion characters among the noise (issue 17): dropped or mapped by the rules' view, split
// anywhere by item and turn cuts (a surrogate pair's halves included); runs of zero-width
// characters push a disguised value's window past what the carried tail holds.
const NOISE = fc.string({
  unit: fc.constantFrom(
    ...'aZ9 _-.:="\n\u200b/'.split(''),
    ...EVASION_CHARACTERS,
    'ｓ',
    '𝐀',
    'ﬁ',
    '\u{e0041}',
    '\u{1f600}',
    '\u200b'.repeat(40),
  ),
  maxLength: 120,
});
const planted = [
  ...Object.values(FAKE_SECRET_BY_RULE),
  ...Object.values(FAKE_INJECTION_BY_RULE),
  ...evasions().map((e) => () => e.hidden),
];

/** A document: noise with planted secrets and injection cues. */
const documentArb = fc
  .tuple(NOISE, fc.array(fc.tuple(fc.nat(planted.length - 1), NOISE), { maxLength: 3 }))
  .map(([head, parts]) => head + parts.map(([k, tail]) => planted[k]() + tail).join(''));

/** Documents of one kind each, cut into 1–3 items at random points (splitting what was planted). */
const conversationArb = fc
  .array(fc.tuple(fc.constantFrom(...KINDS), documentArb, fc.array(fc.nat(), { maxLength: 2 })), {
    minLength: 1,
    maxLength: 5,
  })
  .map((docs) =>
    docs.flatMap(([[itemType, role], text, cuts]) => {
      const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
      return [0, ...at].map((from, i) => item(text.slice(from, at[i] ?? text.length), itemType, role));
    }),
  )
  .chain((items) => fc.tuple(fc.constant(items), fc.array(fc.nat(items.length), { maxLength: 5 })));

function turnsOf<T>(items: readonly T[], cuts: readonly number[]): T[][] {
  const bounds = [0, ...[...cuts].sort((a, b) => a - b), items.length];
  return bounds.slice(1).map((end, i) => items.slice(bounds[i], end));
}

const key = (f: safetyV1.Finding) =>
  `${f.ruleId}|${f.itemIndex}:${f.start}-${f.endItemIndex}:${f.end}|${f.action}|${f.score}`;
const keys = (fs: readonly safetyV1.Finding[]) => [...new Set(fs.map(key))].sort();

describe('Classifier, incremental versus full', () => {
  const strict = testClassifier({ actions: { injection: 'block', secret: 'flag' }, threshold: 8 });

  it.each([
    ['default actions', classifier],
    ['other actions and threshold', strict],
  ])('finds exactly what a full re-scan finds, at every turn, with %s', (_, c) => {
    fc.assert(
      fc.property(conversationArb, ([items, cuts]) => {
        let state: Buffer = EMPTY;
        let seen = 0;
        const settled: safetyV1.Finding[] = [];
        for (const turn of turnsOf(items, cuts)) {
          const res = c.classify({ state, items: turn });
          seen += turn.length;
          settled.push(...res.findings.filter((f) => !f.provisional));
          const full = c.classify({ state: EMPTY, items: items.slice(0, seen) });
          expect(keys([...settled, ...res.findings.filter((f) => f.provisional)])).toEqual(keys(full.findings));
          expect(res.verdict).toBe(full.verdict);
          // The first finding of a blocked conversation is the one to show: identical on both paths.
          if (res.verdict === VERDICT_BLOCK) expect(key(res.findings[0])).toEqual(key(full.findings[0]));
          expect(res.state.equals(full.state)).toBe(true);
          state = res.state;
        }
      }),
      { numRuns: 150 },
    );
  });

  it('answers the same, state included, when it scans in slices and pauses between them', async () => {
    await fc.assert(
      fc.asyncProperty(conversationArb, fc.integer({ min: 1, max: 400 }), async ([items, cuts], sliceChars) => {
        const sliced = testClassifier({ sliceChars, pauseAfterMs: 0 });
        let state: Buffer = EMPTY;
        let pauses = 0;
        for (const turn of turnsOf(items, cuts)) {
          const whole = classifier.classify({ state, items: turn });
          const res = await sliced.classifyAsync({ state, items: turn }, { pause: async () => void pauses++ });
          expect(res).toEqual(whole);
          state = res.state;
        }
        const text = items.reduce((n, i) => n + i.text.length, 0);
        if (text > 2 * (sliceChars + 255) * 3) expect(pauses).toBeGreaterThan(0);
      }),
      { numRuns: 150 },
    );
  });
});
