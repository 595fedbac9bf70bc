import { status } from '@grpc/grpc-js';
import { getProfile, type ConversationEntry, type RenderHeader } from '@fastloop/model-profiles';
import { inferenceV1 } from '@fastloop/proto';
import { KEEP_ON_CANCEL, MuxClient } from '@fastloop/service-kit';
import { schemaProblems } from '@fastloop/test-kit';
import type { Engine, EngineRequest } from './engine';
import { commonPrefixLength } from './prompt-assembly';
import { completionToEntry, toolOutputFor } from './testing/completion-entry';
import { eventually, generate, metricValue, startTestWorker, type TestWorker } from './testing/test-worker';

const { FinishReason } = inferenceV1;
const profile = getProfile('harmony-o200k');
const header: RenderHeader = {
  instructions: 'You are a travel agent.',
  tools: [
    {
      name: 'get_weather',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' }, days: { type: 'number' } },
        required: ['city', 'days'],
      },
    },
    {
      name: 'book_hotel',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string' },
          nights: { type: 'number' },
          rooms: {
            type: 'array',
            items: { type: 'object', properties: { beds: { type: 'number' } }, required: ['beds'] },
          },
        },
        required: ['city', 'nights', 'rooms'],
      },
    },
  ],
};
const user = (text: string): ConversationEntry => ({ kind: 'message', role: 'user', text });

describe('InferenceService/Generate with the simulated engine', () => {
  let t: TestWorker;
  beforeAll(async () => {
    t = await startTestWorker({ SIM_TOOL_CALLS: '2', SIM_ANSWER_WORDS: '25' });
  });
  afterAll(() => t.close());

  it('runs an agent loop: tool calls that validate, then a final answer, each turn sending only new tokens', async () => {
    const parsedTools = profile.parsePrompt(profile.render(header, [])).tools;
    const entries: ConversationEntry[] = [user('Find me a hotel in Lisbon for the weekend')];
    let held: number[] = [];
    const kinds: string[] = [];
    for (let turn = 0; turn < 5; turn++) {
      const prompt = profile.render(header, entries);
      // What the edge does: send only what follows the part the worker already holds.
      const prefixLen = commonPrefixLength(held, prompt);
      const { result } = generate(t.client, {
        sessionKey: 'conv-1',
        prefixLen,
        tokens: prompt.slice(prefixLen),
        maxOutputTokens: 4096,
      });
      const { tokens, done } = await result;
      expect(done).toMatchObject({
        finishReason: FinishReason.FINISH_REASON_STOP,
        promptTokens: prompt.length,
        cachedTokens: prefixLen,
        completionTokens: tokens.length,
      });
      expect(done!.engineTtftMs).toBeGreaterThanOrEqual(0);
      if (turn > 0) expect(prefixLen).toBeGreaterThan(0);
      held = [...prompt, ...tokens];
      const entry = completionToEntry(profile, tokens, `call_${turn}`);
      kinds.push(entry.kind);
      entries.push(entry);
      if (entry.kind === 'message') break;
      if (entry.kind !== 'function_call') throw new Error('unexpected entry');
      const tool = parsedTools.find((x) => x.name === entry.name)!;
      expect(schemaProblems(tool.parameters, JSON.parse(entry.arguments))).toEqual([]);
      expect(profile.decode(tokens.slice(-1))).toBe('<|call|>');
      entries.push(toolOutputFor(entry, '{"status":"ok"}'));
    }
    expect(kinds).toEqual(['function_call', 'function_call', 'message']);
    const answer = entries[entries.length - 1];
    expect(answer.kind === 'message' && answer.text.split(' ').length).toBe(25);
  });

  it('fails with a retryable prefix_miss for an unknown session, and the full resend then works', async () => {
    const prompt = profile.render({ tools: [] }, [user('hello')]);
    const miss = generate(t.client, { sessionKey: 'unknown', prefixLen: 5, tokens: prompt.slice(5) }).result;
    await expect(miss).rejects.toMatchObject({
      code: 'prefix_miss',
      retryable: true,
      grpcStatus: status.FAILED_PRECONDITION,
    });
    const full = await generate(t.client, { sessionKey: 'unknown', prefixLen: 0, tokens: prompt }).result;
    expect(full.done).toMatchObject({ promptTokens: prompt.length, cachedTokens: 0 });
    // A full resend of a known session is cached for the prefix it shares with what is held.
    const again = await generate(t.client, { sessionKey: 'unknown', prefixLen: 0, tokens: prompt }).result;
    expect(again.done).toMatchObject({ promptTokens: prompt.length, cachedTokens: prompt.length });
    expect(again.tokens).toEqual(full.tokens); // deterministic
  });

  it('fails with prefix_miss when prefix_len exceeds what the session holds', async () => {
    const prompt = profile.render({ tools: [] }, [user('hi')]);
    const first = await generate(t.client, { sessionKey: 'short', tokens: prompt }).result;
    const heldLen = prompt.length + first.tokens.length;
    await expect(
      generate(t.client, { sessionKey: 'short', prefixLen: heldLen + 1, tokens: [1] }).result,
    ).rejects.toMatchObject({ code: 'prefix_miss' });
    const ok = await generate(t.client, { sessionKey: 'short', prefixLen: heldLen, tokens: [] }).result;
    expect(ok.done).toMatchObject({ promptTokens: heldLen, cachedTokens: heldLen });
  });

  it('reads the prefix from parent_session_key and moves the session to the new key', async () => {
    const prompt = profile.render({ tools: [] }, [user('branch me')]);
    const first = await generate(t.client, { sessionKey: 'resp-a', tokens: prompt }).result;
    const held = [...prompt, ...first.tokens];
    const next = [...held, ...profile.renderEntry(user('and more')), ...profile.renderGenerationPrompt()];
    const second = await generate(t.client, {
      sessionKey: 'resp-b',
      parentSessionKey: 'resp-a',
      prefixLen: held.length,
      tokens: next.slice(held.length),
    }).result;
    expect(second.done).toMatchObject({ promptTokens: next.length, cachedTokens: held.length });
    expect(t.worker.sessions.has('resp-b')).toBe(true);
    // A branch from resp-a no longer finds its tokens there: it must resend, never reuse resp-b's.
    expect(t.worker.sessions.has('resp-a')).toBe(false);
    await expect(
      generate(t.client, { sessionKey: 'resp-c', parentSessionKey: 'resp-a', prefixLen: 3, tokens: [1] }).result,
    ).rejects.toMatchObject({ code: 'prefix_miss' });
  });

  it('caches a stateless full resend (a fresh key, no parent) by content, as much as the session path would', async () => {
    const entries: ConversationEntry[] = [user('Plan a week of hiking near Porto')];
    let held: number[] = [];
    for (let turn = 0; turn < 3; turn++) {
      const prompt = profile.render(header, entries);
      const contentBefore = await metricValue(t.registry, 'inference_cached_tokens_by_source_total', {
        engine: 'sim',
        source: 'content',
      });
      // What an HTTP client without previous_response_id does: the whole conversation, a new key.
      const { tokens, done } = await generate(t.client, {
        sessionKey: `stateless-${turn}`,
        tokens: prompt,
        maxOutputTokens: 4096,
      }).result;
      const contentFound =
        (await metricValue(t.registry, 'inference_cached_tokens_by_source_total', {
          engine: 'sim',
          source: 'content',
        })) - contentBefore;
      expect(contentFound).toBe(done!.cachedTokens); // no session matched, so all of it came from content
      if (turn > 0) {
        // Exactly what a parent_session_key lookup of the previous turn reports: not a strawman.
        expect(done!.cachedTokens).toBe(commonPrefixLength(held, prompt));
        expect(done!.cachedTokens).toBeGreaterThanOrEqual(held.length - 1);
      }
      held = [...prompt, ...tokens];
      const entry = completionToEntry(profile, tokens, `call_${turn}`);
      entries.push(entry);
      if (entry.kind !== 'function_call') break;
      entries.push(toolOutputFor(entry, '{"status":"ok"}'));
    }
    expect(await metricValue(t.registry, 'inference_prefix_index_blocks', { engine: 'sim' })).toBe(
      t.worker.sessions.index.size,
    );
  });

  it('with INFERENCE_PREFIX_CACHING=false reuses only the session: a stateless resend is prefilled again', async () => {
    const off = await startTestWorker({ SIM_TOOL_CALLS: '2', INFERENCE_PREFIX_CACHING: 'false' });
    try {
      const entries: ConversationEntry[] = [user('Plan a week of hiking near Porto')];
      const first = await generate(off.client, {
        sessionKey: 'turn-0',
        tokens: profile.render(header, entries),
        maxOutputTokens: 4096,
      }).result;
      const call = completionToEntry(profile, first.tokens, 'call_0');
      entries.push(call, ...(call.kind === 'function_call' ? [toolOutputFor(call, '{"status":"ok"}')] : []));
      const prompt = profile.render(header, entries);
      const stateless = await generate(off.client, { sessionKey: 'stateless-1', tokens: prompt, maxOutputTokens: 4096 })
        .result;
      expect(stateless.done!.cachedTokens).toBe(0);
      // The session path still reuses its own prefix.
      const chained = await generate(off.client, {
        sessionKey: 'turn-1',
        parentSessionKey: 'turn-0',
        tokens: prompt,
        maxOutputTokens: 4096,
      }).result;
      expect(chained.done!.cachedTokens).toBeGreaterThan(0);
    } finally {
      await off.close();
    }
  });

  it('keeps nothing and caches nothing without a session key', async () => {
    const prompt = profile.render({ tools: [] }, [user('stateless')]);
    await generate(t.client, { tokens: prompt }).result;
    const again = await generate(t.client, { tokens: prompt }).result;
    expect(again.done!.cachedTokens).toBe(0);
    expect(t.worker.sessions.has('')).toBe(false);
  });

  it('rejects token ids outside the vocabulary and empty prompts with invalid_prompt', async () => {
    const bad = generate(t.client, { tokens: [1, profile.vocabSize] }).result;
    await expect(bad).rejects.toMatchObject({
      code: 'invalid_prompt',
      grpcStatus: status.INVALID_ARGUMENT,
      retryable: false,
    });
    await expect(generate(t.client, { tokens: [] }).result).rejects.toMatchObject({ code: 'invalid_prompt' });
  });

  it('stamps every chunk with the engine time since the call arrived, the first one at its TTFT', async () => {
    // At most 8 tokens a chunk: several chunks however the scheduler groups the sampled tokens.
    const paced = await startTestWorker({
      SIM_TTFT_MS: '20',
      SIM_TOKENS_PER_SECOND: '2000',
      INFERENCE_MAX_CHUNK_TOKENS: '8',
    });
    try {
      const { elapsedMs, done } = await generate(paced.client, {
        sessionKey: 'stamped',
        tokens: profile.render(header, [user('hi')]),
        maxOutputTokens: 4096,
      }).result;
      expect(elapsedMs.length).toBeGreaterThan(1);
      expect(elapsedMs[0]).toBeGreaterThanOrEqual(20);
      expect(elapsedMs[0]).toBe(done!.engineTtftMs);
      for (let i = 1; i < elapsedMs.length; i++) expect(elapsedMs[i]).toBeGreaterThanOrEqual(elapsedMs[i - 1]);
    } finally {
      await paced.close();
    }
  });

  it('stops after max_output_tokens with LENGTH', async () => {
    const prompt = profile.render({ tools: [] }, [user('a long answer please')]);
    const { tokens, done } = await generate(t.client, { tokens: prompt, maxOutputTokens: 3 }).result;
    expect(tokens).toHaveLength(3);
    expect(done).toMatchObject({ finishReason: FinishReason.FINISH_REASON_LENGTH, completionTokens: 3 });
  });

  it('ends with LENGTH, not STOP, when the engine stopped because its context window was full', async () => {
    const windowed = (full: boolean): Engine => ({
      name: 'sim',
      simulated: true,
      async *generate(request: EngineRequest) {
        yield [100_001, 100_002];
        if (full) request.onContextFull?.();
      },
      close: async () => undefined,
    });
    for (const [full, finish] of [
      [true, FinishReason.FINISH_REASON_LENGTH],
      [false, FinishReason.FINISH_REASON_STOP],
    ] as const) {
      const w = await startTestWorker({}, windowed(full));
      try {
        const { tokens, done } = await generate(w.client, { tokens: [1, 2, 3], maxOutputTokens: 100 }).result;
        expect(tokens).toEqual([100_001, 100_002]);
        expect(done).toMatchObject({ finishReason: finish, completionTokens: 2 });
      } finally {
        await w.close();
      }
    }
  });

  it('stops at a stop token of the request, sending it as the last token', async () => {
    const prompt = profile.render({ tools: [] }, [user('stop early')]);
    const full = await generate(t.client, { tokens: prompt }).result;
    const stopAt = full.tokens[4];
    const { tokens, done } = await generate(t.client, { tokens: prompt, stopTokens: [stopAt] }).result;
    expect(tokens).toEqual(full.tokens.slice(0, full.tokens.indexOf(stopAt) + 1));
    expect(done!.finishReason).toBe(FinishReason.FINISH_REASON_STOP);
  });

  it('counts requests, tokens and session cache activity in its metrics, labelled engine="sim"', async () => {
    expect(
      await metricValue(t.registry, 'inference_requests_total', { engine: 'sim', outcome: 'stop' }),
    ).toBeGreaterThan(0);
    expect(await metricValue(t.registry, 'inference_requests_total', { engine: 'sim', outcome: 'prefix_miss' })).toBe(
      3,
    ); // the three prefix_miss tests above
    expect(await metricValue(t.registry, 'inference_cached_tokens_total', { engine: 'sim' })).toBeGreaterThan(0);
    expect(await metricValue(t.registry, 'inference_session_cache_tokens', { engine: 'sim' })).toBe(
      t.worker.sessions.totalTokens,
    );
    expect(await metricValue(t.registry, 'inference_engine_info', { engine: 'sim', simulated: 'true' })).toBe(1);
  });
});

describe('InferenceService/Generate lifecycle', () => {
  // Slow enough that a call is still streaming when the test acts on it.
  const slow = { SIM_TOKENS_PER_SECOND: '50', SIM_ANSWER_WORDS: '400', SIM_TTFT_MS: '0' };
  const prompt = profile.render({ tools: [] }, [user('tell me a long story')]);

  it("counts a call's prompt tokens as queued until its first token, then not", async () => {
    // A long time to first token: the call waits there, as for a slot or a prefill.
    const t = await startTestWorker({ ...slow, SIM_TTFT_MS: '1500' });
    try {
      const queued = () => metricValue(t.registry, 'inference_queued_tokens', { engine: 'sim' });
      expect(await queued()).toBe(0);
      const { call, result } = generate(t.client, { sessionKey: 'q', tokens: prompt, maxOutputTokens: 3 });
      await eventually(async () => (await queued()) === prompt.length);
      await new Promise<void>((resolve) => call.once('data', () => resolve()));
      expect(await queued()).toBe(0);
      await result;
      // A cancelled call's count goes too.
      const second = generate(t.client, { sessionKey: 'q2', tokens: prompt });
      const settled = second.result.catch(() => undefined);
      await eventually(async () => (await queued()) === prompt.length);
      second.call.cancel();
      await settled;
      await eventually(async () => (await queued()) === 0);
    } finally {
      await t.close();
    }
  });

  it('stops generating as soon as the caller cancels, and sends nothing more', async () => {
    const t = await startTestWorker(slow);
    try {
      const { call, result } = generate(t.client, { sessionKey: 's', tokens: prompt });
      const settled = result.catch((err: unknown) => err);
      await new Promise<void>((resolve) => call.once('data', () => resolve()));
      call.cancel();
      expect(await settled).toMatchObject({ code: 'cancelled' });
      await eventually(() => t.worker.service.inFlightCount === 0);
      expect(await metricValue(t.registry, 'inference_requests_total', { outcome: 'cancelled' })).toBe(1);
      // A cancelled call keeps nothing (the caller may have cancelled a prompt safety blocked).
      expect(t.worker.sessions.get('s')).toBeUndefined();
      expect(t.worker.sessions.index.size).toBe(0);
    } finally {
      await t.close();
    }
  });

  it('keeps the session of a call its caller cancelled with keep (an interrupted or steered response), over the multiplexed stream', async () => {
    const t = await startTestWorker(slow);
    const mux = new MuxClient(() => t.client.generateStream(), { streams: 1 });
    try {
      const abort = new AbortController();
      const request = inferenceV1.GenerateRequest.fromPartial({
        sessionKey: 'kept',
        tokens: prompt,
        maxOutputTokens: 1000,
      });
      const reading = (async () => {
        for await (const r of mux.stream(request, { deadlineMs: 10_000, signal: abort.signal }))
          if (r.event?.$case === 'chunk') abort.abort(KEEP_ON_CANCEL);
      })();
      await expect(reading).rejects.toMatchObject({ code: 'cancelled' });
      await eventually(() => t.worker.service.inFlightCount === 0);
      // The prompt and what was sampled stay for the next turn, which then prefills only what it adds.
      await eventually(() => (t.worker.sessions.get('kept')?.length ?? 0) > prompt.length);
    } finally {
      mux.close();
      await t.close();
    }
  });

  it('stops generating when the call deadline passes', async () => {
    const t = await startTestWorker(slow);
    try {
      await expect(generate(t.client, { tokens: prompt }, 200).result).rejects.toMatchObject({
        code: 'deadline_exceeded',
      });
      await eventually(() => t.worker.service.inFlightCount === 0);
    } finally {
      await t.close();
    }
  });

  it('fails fast with a retryable worker_overloaded beyond INFERENCE_MAX_CONCURRENCY', async () => {
    const t = await startTestWorker({ ...slow, INFERENCE_MAX_CONCURRENCY: '1', INFERENCE_SLOT_WAIT_MS: '0' });
    try {
      const first = generate(t.client, { tokens: prompt });
      const firstSettled = first.result.catch((err: unknown) => err);
      await new Promise<void>((resolve) => first.call.once('data', () => resolve()));
      await expect(generate(t.client, { tokens: prompt }).result).rejects.toMatchObject({
        code: 'worker_overloaded',
        retryable: true,
        grpcStatus: status.RESOURCE_EXHAUSTED,
      });
      first.call.cancel();
      await firstSettled;
    } finally {
      await t.close();
    }
  });

  it('sends what the engine sampled while the caller did not read in fewer, larger chunks, none over INFERENCE_MAX_CHUNK_TOKENS', async () => {
    // One token per step, as llama.cpp yields them. Nothing here depends on how fast either side
    // runs: the test reads the engine's state only between macrotasks, where a generator suspended
    // at its yield (and not resting in its own setImmediate) can only be waiting for the writer,
    // i.e. the writer holds INFERENCE_MAX_CHUNK_TOKENS tokens for a caller that does not read.
    const max = 64;
    const pauses = 3;
    let pulled = 0;
    let atYield = false;
    let stop = false;
    const stepper: Engine = {
      name: 'sim',
      simulated: true,
      async *generate() {
        for (let i = 0; !stop; i++) {
          if (i % 50 === 0) await new Promise((r) => setImmediate(r));
          pulled++;
          atYield = true;
          yield [100_000 + (i % 50_000)];
          atYield = false;
        }
      },
      close: async () => undefined,
    };
    const t = await startTestWorker(
      { INFERENCE_MAX_OUTPUT_TOKENS: '10000000', INFERENCE_MAX_CHUNK_TOKENS: String(max) },
      stepper,
    );
    try {
      const { call, result } = generate(t.client, { tokens: [1, 2, 3], maxOutputTokens: 10_000_000 }, 60_000);
      // Polls only from timer callbacks, where no microtask of the engine or the writer is pending.
      const untilTimer = async (condition: () => boolean) => {
        do await new Promise((r) => setTimeout(r, 10));
        while (!condition());
      };
      const blocked = async () => {
        await untilTimer(() => atYield);
        return pulled;
      };
      const heldAt: number[] = [];
      for (let p = 0; p < pauses; p++) {
        call.pause();
        heldAt.push(await blocked());
        if (p === pauses - 1) stop = true; // the engine ends at its next step
        call.resume();
        await untilTimer(() => !atYield || stop);
      }
      const { tokens, chunks } = await result;
      expect(tokens).toEqual(Array.from({ length: pulled }, (_, i) => 100_000 + (i % 50_000)));
      expect(chunks[0]).toHaveLength(1); // the first token is never held
      expect(Math.max(...chunks.map((c) => c.length))).toBe(max);
      // Each stall left as one chunk of exactly `max` tokens, ending at the token the engine was held on.
      const ends = chunks.reduce<number[]>((acc, c) => [...acc, (acc.at(-1) ?? 0) + c.length], []);
      for (const at of heldAt) expect(chunks[ends.indexOf(at)]).toHaveLength(max);
      expect(chunks.length).toBeLessThanOrEqual(tokens.length - pauses * (max - 1));
      expect(await metricValue(t.registry, 'inference_token_chunks_total', { engine: 'sim' })).toBe(chunks.length);
    } finally {
      await t.close();
    }
  }, 120_000);

  it('waits for the caller to read (back-pressure) instead of buffering the whole completion', async () => {
    const total = 200; // the server stalls after a few dozen chunks when nobody reads
    let pulled = 0;
    let aborted = false;
    const flood: Engine = {
      name: 'sim',
      simulated: true,
      async *generate(request: EngineRequest) {
        request.signal.addEventListener('abort', () => (aborted = true));
        for (let i = 0; i < total; i++) {
          pulled++;
          yield Array.from({ length: 1_000 }, (_, j) => 100_000 + ((i + j) % 50_000));
        }
      },
      close: async () => undefined,
    };
    const t = await startTestWorker({ INFERENCE_MAX_OUTPUT_TOKENS: '10000000' }, flood);
    try {
      const { call, result } = generate(t.client, { tokens: [1, 2, 3], maxOutputTokens: 10_000_000 });
      call.pause();
      let last = -1;
      // Wait until the engine stops being pulled while nobody reads.
      await eventually(async () => {
        const stalled = pulled === last;
        last = pulled;
        await new Promise((r) => setTimeout(r, 100));
        return stalled;
      });
      expect(pulled).toBeLessThan(total);
      call.resume();
      const { tokens, done } = await result;
      expect(tokens).toHaveLength(total * 1_000);
      expect(done).toMatchObject({ completionTokens: total * 1_000, finishReason: FinishReason.FINISH_REASON_STOP });
      expect(aborted).toBe(false);
    } finally {
      await t.close();
    }
  }, 20_000);
});
