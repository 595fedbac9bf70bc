/**
 * Micro-benchmark of content-addressed prefix reuse on one 100k-token conversation among 30 other
 * held ones (3.1M tokens held): what each Generate call pays before prefill.
 *
 *   npx tsx apps/inference/bench/prefix-match.bench.ts
 *
 * Measured (Node 20, one core): hashing 100k tokens ≈ 0.25 ms; a stateless full resend
 * (hash + index walk + verify) ≈ 0.4 ms; a session hit that extends its parent ≈ 0.01 ms for the
 * match. Storing the moved session is O(new tokens) since the logs are append-only (see
 * sequence-log.bench.ts for a whole cached turn's bookkeeping).
 */
import { performance } from 'node:perf_hooks';
import { extendBlockHashes } from '../src/block-hash';
import { matchPrefix } from '../src/prefix-match';
import { SequenceLog } from '../src/sequence-log';
import { SessionCache } from '../src/session-cache';

const TOKENS = 100_000;

function time(label: string, reps: number, run: () => void): void {
  for (let i = 0; i < 50; i++) run(); // warm up the JIT
  const started = performance.now();
  for (let i = 0; i < reps; i++) run();
  const ms = (performance.now() - started) / reps;
  process.stdout.write(`${label.padEnd(48)} ${ms.toFixed(4)} ms/call\n`);
}

function main(): void {
  const conversation = Array.from({ length: TOKENS }, (_, i) => (i * 2_654_435_761) % 200_000);
  const cache = new SessionCache({ maxTokens: 4_000_000, maxEntries: 10_000 });
  for (let s = 0; s < 30; s++)
    cache.set(
      `other-${s}`,
      Uint32Array.from(conversation, (t) => (t + s + 1) % 200_000),
    );
  cache.set('conversation', Uint32Array.from(conversation));
  const prompt = [...conversation, 1, 2, 3, 4, 5];
  const held = cache.lookup('conversation')!;
  const promptTokens = Uint32Array.from(prompt);
  const promptHashes = extendBlockHashes(prompt);

  time('hash 100k tokens', 200, () => extendBlockHashes(prompt));
  time('stateless full resend: hash + match', 200, () =>
    matchPrefix(cache, promptTokens, extendBlockHashes(prompt), undefined, 0),
  );
  time('session hit (prompt = held ++ 5): match', 5_000, () =>
    matchPrefix(cache, promptTokens, promptHashes, held, TOKENS),
  );
  const log = new SequenceLog();
  log.append(prompt);
  let turn = 0;
  time('session hit: append 5 tokens, store the moved session', 5_000, () => {
    const from = turn === 0 ? 'conversation' : `turn-${turn - 1}`;
    log.append([1, 2, 3, 4, 5]);
    cache.set(`turn-${turn++}`, log.tokens(), { blockHashes: log.hashes(), moveFrom: from, log });
  });
  process.stdout.write(`index memberships ${cache.index.size}, held tokens ${cache.totalTokens}\n`);
}

main();
