import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scanStream } from './stream-scan';
import { SECRET_RULES } from './secret-rules';
import { encodedSecretRule } from './encoded-rules';

// A corpus written from the providers' documentation, not from the rules (corpus/secrets.json):
// every kind in its documented format must be found, and lookalikes (UUIDs, hashes, digests, base64
// blobs, documentation placeholders, checksum-failing tokens) must not be taken for any secret.
interface Corpus {
  positive: { rule: string; text: string; source: string }[];
  negative: { text: string; source: string }[];
}
const corpus = JSON.parse(readFileSync(join(__dirname, 'corpus/secrets.json'), 'utf8')) as Corpus;
// With the decoder of base64/hex runs: the corpus' base64 blobs and hashes must not decode to a secret either.
const rules = [...SECRET_RULES, encodedSecretRule(SECRET_RULES)];
const found = (text: string) => scanStream(` ${text} `, 0, rules).map((m) => m.rule.id);

describe('secret rules against a corpus from the providers’ documentation', () => {
  it('has an example of every credential kind, each with its source', () => {
    expect(new Set(corpus.positive.map((p) => p.rule))).toEqual(new Set(SECRET_RULES.map((r) => r.id)));
    for (const e of [...corpus.positive, ...corpus.negative]) expect(e.source.length).toBeGreaterThan(10);
  });

  it.each(corpus.positive.map((p) => [p.rule, p.source, p.text] as const))('finds %s (%s)', (rule, _source, text) => {
    expect(found(text)).toContain(rule);
  });

  it.each(corpus.negative.map((n) => [n.source, n.text] as const))(
    'takes nothing for a secret in %s',
    (_source, text) => {
      expect(found(text)).toEqual([]);
    },
  );
});
