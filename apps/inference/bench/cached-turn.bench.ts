/**
 * The worker's own bookkeeping on a cached turn, as the history grows: a 50-turn agent rollout
 * (tool outputs of ~1.5k tokens, ~75k tokens at the end) played through the same functions
 * GenerateService calls (session lookup, prompt assembly, prefix match, the simulator reading the
 * prompt, keeping prompt + completion), once with the append-only logs and the incremental prompt
 * reader, and once parsing the whole prompt as the simulator did before.
 *
 *   npx tsx apps/inference/bench/cached-turn.bench.ts
 *
 * Before (copied prefix, copied hashes, full parse) the simulator's read alone grew to 7–22 ms at
 * 46k tokens; with logs and the reader every part stays flat (the numbers this prints).
 */
import { performance } from 'node:perf_hooks';
import { getProfile, type ConversationEntry, type RenderHeader } from '@fastloop/model-profiles';
import { SimEngine } from '../src/engines/sim/sim-engine';
import { matchPrefix } from '../src/prefix-match';
import { assemblePrompt, sessionSequence } from '../src/prompt-assembly';
import { SessionCache } from '../src/session-cache';
import { completionToEntry, toolOutputFor } from '../src/testing/completion-entry';

const TURNS = 50;
const profile = getProfile('harmony-o200k');
const header: RenderHeader = {
  instructions: 'You are a coding agent. '.repeat(300),
  tools: ['read_file', 'grep', 'run_tests'].map((name) => ({
    name,
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  })),
};

function main(): void {
  profile.warmUp();
  const engine = new SimEngine({
    profile,
    pace: { ttftMs: 0, prefillTokensPerSecond: 1e9, tokensPerSecond: 1e6, jitter: 0 },
    script: { toolCalls: TURNS - 1, answerWords: 40 },
  });
  const sessions = new SessionCache({ maxTokens: 4_000_000, maxEntries: 10_000 });
  const entries: ConversationEntry[] = [
    { kind: 'message', role: 'user', text: 'Fix the flaky test in the cache module.' },
  ];
  const rendered: number[] = profile.render(header, entries);
  const out: string[] = [
    'turn | prompt tokens | prepare ms | sim read (incremental) ms | sim read (full parse) ms | keep ms',
  ];
  let previousKey = '';
  for (let turn = 1; turn <= TURNS; turn++) {
    const held = previousKey === '' ? undefined : sessions.lookup(previousKey);
    const prefixLen = held?.tokens.length ?? 0;
    const t0 = performance.now();
    const assembled = assemblePrompt(held, prefixLen, rendered.slice(prefixLen), sessions.hasher);
    matchPrefix(
      sessions,
      assembled.prompt,
      assembled.log.hashes(assembled.prompt.length),
      held,
      assembled.cachedTokens,
    );
    const t1 = performance.now();
    const completion = engine.complete(assembled.prompt, assembled.log);
    const t2 = performance.now();
    engine.complete(Array.from(assembled.prompt));
    const t3 = performance.now();
    const kept = sessionSequence(assembled, completion);
    sessions.set(`turn-${turn}`, kept.tokens, {
      blockHashes: kept.blockHashes,
      log: kept.log,
      moveFrom: previousKey || undefined,
    });
    const t4 = performance.now();
    previousKey = `turn-${turn}`;
    if (turn === 1 || turn % 5 === 0)
      out.push(
        `${turn} | ${assembled.prompt.length} | ${(t1 - t0).toFixed(3)} | ${(t2 - t1).toFixed(3)} | ${(t3 - t2).toFixed(3)} | ${(t4 - t3).toFixed(3)}`,
      );
    const entry = completionToEntry(profile, completion, `call_${turn}`);
    if (entry.kind !== 'function_call') break;
    const output = toolOutputFor(
      entry,
      `line ${turn}: const value = compute(${turn}, 'some realistic source text here');\n`.repeat(80),
    );
    entries.push(entry, output);
    // The next prompt is what the edge would render: the held tokens, then the tool output and the generation prompt.
    rendered.length = 0;
    rendered.push(...kept.tokens, ...profile.renderEntry(output), ...profile.renderGenerationPrompt());
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

main();
