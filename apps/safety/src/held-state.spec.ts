import fc from 'fast-check';
import { safetyV1 } from '@fastloop/proto';
import { ErrorCode } from '@fastloop/service-kit';
import type { HeldState } from './classifier';
import { FAKE_SECRET_BY_RULE } from './testing/fake-secrets';
import { testClassifier } from './testing/test-classifier';

const { VERDICT_BLOCK } = safetyV1.Verdict;
const TERM = 'forbidden phrase';
const TENANT = 'acme';
const policies = { tenants: { [TENANT]: { terms: [TERM], regexes: [], actions: {} } }, models: {} };
const classifier = testClassifier({ policies });
const out = (text: string): safetyV1.SafetyItem => ({
  itemType: 'output_text',
  role: 'assistant',
  text,
  source: safetyV1.ItemSource.ITEM_SOURCE_MODEL,
});
const user = (text: string): safetyV1.SafetyItem => ({
  itemType: 'message',
  role: 'user',
  text,
  source: safetyV1.ItemSource.ITEM_SOURCE_INPUT,
});

const secrets = Object.values(FAKE_SECRET_BY_RULE).map((make) => make());
const fragment = fc.oneof(
  fc.constantFrom('the ', 'task ', 'key', 'token', ' = ', '"', '\n', 'sk-', 'ghp_', 'AKIA', 'forbidden '),
  fc.constantFrom(...secrets, TERM),
  fc.tuple(fc.constantFrom(...secrets, TERM), fc.nat()).map(([s, n]) => s.slice(0, n % s.length)),
  fc.string({ unit: fc.constantFrom(...'aZ09_-= .:/\n'), maxLength: 12 }),
);
const output = fc.array(fragment, { minLength: 1, maxLength: 10 }).map((f) => f.join(''));

function split(text: string, cuts: readonly number[]): string[] {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const parts: string[] = [];
  let from = 0;
  for (const c of [...at, text.length]) if (c > from || parts.length === 0) parts.push(text.slice(from, (from = c)));
  return parts;
}

type Answer = Pick<safetyV1.ClassifyResponse, 'verdict' | 'findings' | 'heldChars' | 'state'>;

/** Moderates `batches` on top of `start` as a session does: the state held decoded between batches. */
async function held(start: Buffer, batches: readonly string[]): Promise<Answer[]> {
  const answers: Answer[] = [];
  let kept: HeldState['previous'];
  let heldChars: number | undefined;
  for (const [i, text] of batches.entries()) {
    const final = i === batches.length - 1;
    const output = { final, ...(heldChars !== undefined ? { heldBefore: heldChars } : {}) };
    const res = await classifier.classifyAsync(
      { state: kept ? Buffer.alloc(0) : start, items: [out(text)], tenant: TENANT, output },
      { held: { previous: kept, keep: final ? undefined : (next) => (kept = next) } },
    );
    answers.push(res);
    heldChars = res.heldChars;
    if (res.verdict === VERDICT_BLOCK) break;
  }
  return answers;
}

/** The same batches as Classify calls, each carrying the previous answer's state bytes. */
function carried(start: Buffer, batches: readonly string[]): Answer[] {
  const answers: Answer[] = [];
  let state = start;
  let heldChars: number | undefined;
  for (const [i, text] of batches.entries()) {
    const final = i === batches.length - 1;
    const output = { final, ...(heldChars !== undefined ? { heldBefore: heldChars } : {}) };
    const res = classifier.classify({ state, items: [out(text)], tenant: TENANT, output });
    answers.push(res);
    heldChars = res.heldChars;
    state = res.state;
    if (res.verdict === VERDICT_BLOCK) break;
  }
  return answers;
}

describe('held state (moderation sessions)', () => {
  it('answers every cut of any output as carried state bytes do; the final and blocking answers carry the same bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.option(output), output, fc.array(fc.nat(), { maxLength: 8 }), async (history, text, cuts) => {
        const start = history
          ? classifier.classify({ state: Buffer.alloc(0), items: [user(history)], tenant: TENANT }).state
          : Buffer.alloc(0);
        const batches = split(text, cuts);
        const a = await held(start, batches);
        const b = carried(start, batches);
        expect(a.map(({ verdict, findings, heldChars }) => ({ verdict, findings, heldChars }))).toEqual(
          b.map(({ verdict, findings, heldChars }) => ({ verdict, findings, heldChars })),
        );
        const last = a.length - 1;
        expect(a[last].state.equals(b[last].state)).toBe(true);
        // Between batches nothing is encoded: the state is in memory.
        for (const r of a.slice(0, last)) expect(r.state.length).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a held state made under another policy, as it refuses such bytes', async () => {
    let kept: HeldState['previous'];
    await classifier.classifyAsync(
      { state: Buffer.alloc(0), items: [out('the plan ')], tenant: TENANT, output: { final: false } },
      { held: { keep: (next) => (kept = next) } },
    );
    expect(kept).toBeDefined();
    await expect(
      classifier.classifyAsync(
        { state: Buffer.alloc(0), items: [out('is ready')], tenant: 'another', output: { final: true } },
        { held: { previous: kept } },
      ),
    ).rejects.toMatchObject({ code: ErrorCode.invalidSafetyState });
  });
});
