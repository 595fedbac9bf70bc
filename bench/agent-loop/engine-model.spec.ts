import { DEFAULT_PROFILE_ID, getProfile } from '@fastloop/model-profiles';
// These values replay apps/inference/src/engines/sim/sim-pacing.ts (first token alone at the TTFT, then what is
// due on each 5 ms tick); bench may not import an app, so a change there must be mirrored here.
import { emissionTimeMs, engineTiming, engineTtftMs, firstEventTokenIndex, SIM_TICK_MS } from './engine-model';

describe('engine model', () => {
  it('adds the prefill of uncached tokens to the base TTFT', () => {
    expect(engineTtftMs(0, { ttftMs: 50, prefillTokensPerSecond: 20_000 })).toBe(50);
    expect(engineTtftMs(4_000, { ttftMs: 50, prefillTokensPerSecond: 20_000 })).toBe(250);
  });

  it('replays the sim engine chunking: first token alone, later ones batched by the tick', () => {
    expect(emissionTimeMs(1, 80, 1000)).toBe(80);
    expect(emissionTimeMs(2, 80, 1000)).toBe(85);
    expect(emissionTimeMs(12, 80, 1000)).toBe(95);
    expect(emissionTimeMs(2, 80, 65)).toBeCloseTo(80 + 1000 / 65, 9);
  });

  it('finds the token at which the harmony parser opens a function call and a message', () => {
    const profile = getProfile(DEFAULT_PROFILE_ID);
    const call = firstEventTokenIndex(profile, {
      kind: 'function_call',
      name: 'read_file',
      arguments: '{"path":"a.ts"}',
      callId: 'call_1',
    });
    const message = firstEventTokenIndex(profile, {
      kind: 'message',
      role: 'assistant',
      text: 'Done: all tests pass.',
    });
    expect(call).toBeGreaterThan(message);
    expect(message).toBeGreaterThanOrEqual(1);
  });

  it("computes a response's engine timing from its usage and first output item", () => {
    const t = engineTiming(
      { input_tokens: 12_000, input_tokens_details: { cached_tokens: 10_000 } },
      { type: 'message', content: [{ type: 'output_text', text: 'ok' }] },
      { ttftMs: 50, prefillTokensPerSecond: 20_000, tokensPerSecond: 1000 },
    );
    expect(t.uncachedTokens).toBe(2_000);
    expect(t.ttftMs).toBe(150);
    expect(t.firstEventMs).toBeGreaterThanOrEqual(150);
  });
});
