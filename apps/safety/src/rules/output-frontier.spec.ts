import fc from 'fast-check';
import { safetyV1 } from '@fastloop/proto';
import { FAKE_SECRET_BY_RULE } from '../testing/fake-secrets';
import { EVASION_CHARACTERS, evasions, sprinkle, ZWSP } from '../testing/evasions';
import { testClassifier } from '../testing/test-classifier';
import { INJECTION_RULES } from './injection-rules';
import { FrontierIndex, prefixOf } from './output-frontier';
import type { Rule } from './rule';
import { SECRET_RULES } from './secret-rules';

const { VERDICT_BLOCK } = safetyV1.Verdict;
const EMPTY = Buffer.alloc(0);
const TERM = 'forbidden phrase';
const TENANT = 'acme';
const classifier = testClassifier({
  policies: { tenants: { [TENANT]: { terms: [TERM], regexes: [], actions: {} } }, models: {} },
});
const MODEL = safetyV1.ItemSource.ITEM_SOURCE_MODEL;
const out = (text: string): safetyV1.SafetyItem => ({
  itemType: 'output_text',
  role: 'assistant',
  text,
  source: MODEL,
});

/** What a streaming moderator sees when the output arrives in `batches` on top of `state` (the last one final when `finished`). */
function moderate(state: Buffer, batches: readonly string[], finished = true) {
  const answers: { end: number; released: number; blocked: boolean }[] = [];
  let end = 0;
  let released = 0;
  let held: number | undefined;
  for (const [i, text] of batches.entries()) {
    const final = finished && i === batches.length - 1;
    const output = { final, ...(held !== undefined ? { heldBefore: held } : {}) };
    const res = classifier.classify({ state, items: [out(text)], tenant: TENANT, output });
    // The hint only saves work: without it every start is tried again, with the same answer.
    const unhinted = classifier.classify({ state, items: [out(text)], tenant: TENANT, output: { final } });
    expect(res.heldChars).toBe(unhinted.heldChars);
    held = res.heldChars;
    end += text.length;
    const blocked = res.verdict === VERDICT_BLOCK;
    if (!blocked) released = Math.max(released, end - (res.heldChars ?? Number.NaN));
    answers.push({ end, released, blocked });
    if (blocked) break;
    state = res.state;
  }
  return answers;
}

/** The full output's verdict, and where its first blocking match starts (output coordinates). */
function full(state: Buffer, firstItem: number, text: string) {
  const res = classifier.classify({ state, items: [out(text)], tenant: TENANT });
  const starts = res.findings
    .filter((f) => f.action === safetyV1.Action.ACTION_BLOCK)
    .map((f) => (f.itemIndex < firstItem ? 0 : f.start));
  return { blocked: res.verdict === VERDICT_BLOCK, firstMatch: Math.min(Infinity, ...starts) };
}

const secrets = Object.values(FAKE_SECRET_BY_RULE).map((make) => make());
const words = [
  'the ',
  'task ',
  'ask ',
  'key',
  'token',
  ' = ',
  ': ',
  '"',
  '\n',
  'SK',
  'sk-',
  'ghp_',
  'AKIA',
  'forbidden ',
];
/** Output made of prose, credential shapes, their prefixes and the policy term, in any order. */
// Disguised credentials (issue 17): the frontier must hold a key whose characters are split by
// invisible ones, or written in fullwidth or mathematical letters, as it holds the plain key.
const disguised = [
  ...evasions()
    .filter((e) => e.stream === 'input')
    .map((e) => e.hidden),
  sprinkle(FAKE_SECRET_BY_RULE['github-token'](), ZWSP.repeat(30), 2),
];
/** Output made of prose, credential shapes (plain and disguised), their prefixes and the policy term, in any order. */
const fragment = fc.oneof(
  fc.constantFrom(...words),
  fc.constantFrom(...secrets, ...disguised, TERM),
  fc.tuple(fc.constantFrom(...secrets, ...disguised, TERM), fc.nat()).map(([s, n]) => s.slice(0, n % s.length)),
  fc.string({ unit: fc.constantFrom(...'aZ09_-= .:/\n'), maxLength: 12 }),
  fc.string({ unit: fc.constantFrom(...EVASION_CHARACTERS, 'ｓ', '𝐀', 'ﬁ'), maxLength: 4 }),
);
const output = fc.array(fragment, { minLength: 1, maxLength: 12 }).map((f) => f.join(''));

/** Splits `text` at the given cuts (sorted, deduplicated, inside the text). */
function split(text: string, cuts: readonly number[]): string[] {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const parts: string[] = [];
  let from = 0;
  for (const c of [...at, text.length]) {
    if (c > from || (c === text.length && parts.length === 0)) parts.push(text.slice(from, c));
    from = Math.max(from, c);
  }
  return parts;
}

describe('output frontier', () => {
  it('every cut gives the full text verdict and releases no character of a blocking match', () => {
    fc.assert(
      fc.property(fc.option(output), output, fc.array(fc.nat(), { maxLength: 8 }), (history, text, cuts) => {
        // The output continues the conversation's carried state (an earlier assistant message).
        const start = history ? classifier.classify({ state: EMPTY, items: [out(history)], tenant: TENANT }) : null;
        fc.pre(!start || start.verdict !== VERDICT_BLOCK);
        const state = start ? start.state : EMPTY;
        const reference = full(state, start ? start.itemsSeen : 0, text);
        const answers = moderate(state, split(text, cuts));
        expect(answers.some((a) => a.blocked)).toBe(reference.blocked);
        for (const a of answers) {
          if (a.blocked) continue;
          expect(a.released).toBeLessThanOrEqual(Math.min(a.end, reference.firstMatch));
        }
        if (!reference.blocked) expect(answers[answers.length - 1].released).toBe(text.length);
      }),
      { numRuns: 300 },
    );
  });

  it('holds nothing before a possible match: prose is released up to where a credential could begin', () => {
    const opening = SECRET_RULES.filter((r) => !r.lead).flatMap((r) => {
      const s = FAKE_SECRET_BY_RULE[r.id]?.();
      const re = new RegExp(r.pattern.source, r.pattern.flags.replace('g', '') + 'y');
      return s && re.test(s) ? [s] : [];
    });
    expect(opening.length).toBeGreaterThan(25);
    const prose = fc
      .array(fc.constantFrom('the', 'plan', 'is', 'ready', 'we', 'shipped', 'it', 'today'), { maxLength: 20 })
      .map((w) => `${w.join(' ')}.\n`);
    fc.assert(
      fc.property(prose, fc.constantFrom(...opening), fc.nat(), (p, secret, n) => {
        const prefix = secret.slice(0, 1 + (n % (secret.length - 1)));
        const [a] = moderate(EMPTY, [p + prefix], false);
        fc.pre(!a.blocked); // the start of a pair can be a whole key id: a settled match, blocked
        expect(a).toEqual({ end: p.length + prefix.length, released: p.length, blocked: false });
      }),
      { numRuns: 300 },
    );
  });

  it('holds only the last word of plain prose, and a policy term only from its start', () => {
    const released = (text: string) => moderate(EMPTY, [text], false)[0].released;
    expect(released('Here is the plan for the release')).toBe('Here is the plan for the '.length);
    expect(released('Done, shipped. ')).toBe('Done, shipped. '.length);
    expect(released('No, that is forbidd')).toBe('No, that is '.length);
    const [, second] = moderate(EMPTY, ['No, that is forbidd', 'en phrase! '], false);
    expect(second.blocked).toBe(true);
  });

  it('adds to the model stream only: what the input call reported is not reported again', () => {
    const tool = { itemType: 'function_call_output', role: '', text: `ok ${String.fromCodePoint(0xe0049, 0xe0067)}` };
    const input = classifier.classify({
      state: EMPTY,
      items: [{ ...tool, source: safetyV1.ItemSource.ITEM_SOURCE_TOOL }],
    });
    expect(input.findings.map((f) => f.ruleId)).toEqual(['hidden-tag-characters']);
    const output = classifier.classify({ state: input.state, items: [out('fine')], output: { final: false } });
    expect(output.findings).toEqual([]);
    expect(output.itemsSeen).toBe(1); // output batches are not items: the output comes back as the items it becomes
  });

  it('holds a key being streamed with invisible characters inside it from its first character', () => {
    const key = FAKE_SECRET_BY_RULE['github-token']();
    const text = `Here it is: ${sprinkle(key, ZWSP, 4)} ok`;
    const keyStart = 'Here it is: '.length;
    const answers = moderate(EMPTY, [...text]);
    expect(answers.some((a) => a.blocked)).toBe(true);
    for (const a of answers) if (!a.blocked) expect(a.released).toBeLessThanOrEqual(keyStart);
  });

  it('releases everything once the output is final', () => {
    const answers = moderate(EMPTY, ['the token', ' is ghp_', '']);
    expect(answers.map((a) => a.released)).toEqual(['the '.length, 'the token is '.length, 'the token is ghp_'.length]);
  });

  it('finds, in one pass for all rules, the frontier each rule gives tried on its own', () => {
    const rules: readonly Rule[] = [...SECRET_RULES, ...INJECTION_RULES];
    const index = new FrontierIndex(rules);
    // The frontier as the rules give it one at a time (each start tried per rule).
    const oneByOne = (text: string, from: number) => {
      let frontier = text.length;
      for (const rule of rules) {
        const lead = rule.lead ?? 0;
        const first = Math.max(0, from - lead, text.length - rule.window + 1);
        const last = frontier - lead;
        if (first < last) frontier = Math.min(frontier, prefixOf(rule).earliestOpen(text, first, last) + lead);
      }
      return frontier;
    };
    fc.assert(
      fc.property(output, fc.nat(), (text, n) => {
        const from = n % (text.length + 1);
        expect(index.frontierIn(text, from)).toBe(oneByOne(text, from));
        expect(index.frontierIn(text, 0)).toBe(oneByOne(text, 0));
      }),
      { numRuns: 500 },
    );
  });
});
