import { safetyV1 } from '@fastloop/proto';
import { testClassifier } from './testing/test-classifier';
import { SafetyStateCodec } from './safety-state';
import { scanStream, tailOf } from './rules/stream-scan';
import { outputFrontier } from './rules/output-frontier';
const c = testClassifier();
const words = 'the relay design carries every stream of tokens to the client while the moderation service judges each batch in order and the frontier keeps the held suffix short'.split(' ');
let seed = 1; const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const batch = () => { let s = ''; while (s.length < 100) s += words[Math.floor(rnd() * words.length)] + ' '; return s; };
const item = (text: string) => ({ itemType: 'output_text', role: 'assistant', text, source: safetyV1.ItemSource.ITEM_SOURCE_MODEL });
let state = Buffer.alloc(0); let held: number | undefined;
const N = 4000;
const batches = Array.from({ length: N }, batch);
for (let w = 0; w < 3; w++) {
  const t0 = performance.now();
  for (const b of batches) {
    const r = c.classify({ state, items: [item(b)], output: { final: false, ...(held !== undefined ? { heldBefore: held } : {}) } } as any);
    state = Buffer.from(r.state); held = r.heldChars;
  }
  console.log('classify per batch us', ((performance.now() - t0) / N * 1000).toFixed(1), 'state bytes', state.length);
}
process.exit(0);
const codec = new SafetyStateCodec('x', 'h');
const content = { itemsSeen: 1, streams: { model: { len: 100000, tail: batches[0].repeat(3).slice(0, 255), items: [[0, 0]], score: 0, crossed: false } }, block: null } as any;
let t0 = performance.now(); for (let i = 0; i < N; i++) codec.decode(codec.encode(content));
console.log('codec enc+dec us', ((performance.now() - t0) / N * 1000).toFixed(1));
const rules = (c as any).options.policies.resolve('', '').rules;
let text = batches[0].repeat(3).slice(0, 255);
t0 = performance.now(); for (const b of batches) { scanStream(text + b, 0, rules); text = tailOf(text + b); }
console.log('scan us', ((performance.now() - t0) / N * 1000).toFixed(1), 'rules', rules.length);
t0 = performance.now(); for (const b of batches) { outputFrontier(text + b, 0, rules, text.length - 20); text = tailOf(text + b); }
console.log('frontier us', ((performance.now() - t0) / N * 1000).toFixed(1));
