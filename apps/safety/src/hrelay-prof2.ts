import { testClassifier } from './testing/test-classifier';
import { prefixOf } from './rules/output-frontier';
const c = testClassifier();
const words = 'the relay design carries every stream of tokens to the client while the moderation service judges each batch in order and the frontier keeps the held suffix short'.split(' ');
let seed = 1; const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
let text = ''; while (text.length < 200000) text += words[Math.floor(rnd() * words.length)] + ' ';
const rules = (c as any).options.policies.resolve('', '').rules;
const policy = (c as any).options.policies.resolve('', '');
const res: [string, number][] = [];
for (const r of rules) {
  if (policy.actions[r.category] !== 'block') continue;
  const p = prefixOf(r);
  const t0 = process.cpuUsage();
  // batches of 100 new chars: starts over the new text and a held word
  for (let e = 400; e < text.length; e += 100) p.earliestOpen(text.slice(0, e), e - 110, e);
  const u = process.cpuUsage(t0); res.push([r.id, (u.user + u.system) / ((text.length - 400) / 100)]);
}
res.sort((a, b) => b[1] - a[1]); let tot = 0; for (const [, v] of res) tot += v;
console.log('total us/batch', tot.toFixed(1)); for (const [id, v] of res.slice(0, 8)) console.log(v.toFixed(1), id);
