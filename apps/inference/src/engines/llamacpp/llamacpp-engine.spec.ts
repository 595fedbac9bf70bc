import fc from 'fast-check';
import pino from 'pino';
import {
  ggufProfileId,
  loadNodeLlamaCpp,
  resolveProfile,
  type ConversationEntry,
  type ModelProfile,
  type ParseEvent,
} from '@fastloop/model-profiles';
import type { EnginePrefill, EngineRequest } from '../../engine';
import { completionToEntry, toolOutputFor } from '../../testing/completion-entry';
import { enforceableSchema } from '../../testing/schema-arbitraries';
import { LlamaCppEngine } from './llamacpp-engine';
import { describeWhenAvailable, schemaProblems, testModel } from '@fastloop/test-kit';

const testModelFile = testModel();
const MODEL = testModelFile.path;
const describeModel = describeWhenAvailable(testModelFile);

describeModel('LlamaCppEngine on stories260K (real llama.cpp, one thread)', () => {
  let profile: ModelProfile;
  let engine: LlamaCppEngine;

  beforeAll(async () => {
    profile = await resolveProfile(ggufProfileId(MODEL));
    engine = await LlamaCppEngine.create({
      modelPath: MODEL,
      profile,
      sequences: 2,
      // Twice what stories260K was trained on: a tool's schema in the header alone takes ~400 tokens
      // of its 512-piece vocabulary, and these tests sample whole calls after it.
      contextSize: 1024,
      threads: 1,
      gpuLayers: 0,
      logger: pino({ level: 'silent' }),
    });
  }, 60_000);
  afterAll(() => engine?.close());

  async function run(
    prompt: number[],
    extra: Partial<EngineRequest> = {},
  ): Promise<{ tokens: number[]; prefill?: EnginePrefill; aligned: number }> {
    let prefill: EnginePrefill | undefined;
    let aligned = 0;
    const tokens: number[] = [];
    const request: EngineRequest = {
      prompt: Uint32Array.from(prompt),
      cachedTokens: 0,
      maxOutputTokens: 12,
      stopTokens: new Set(profile.stopTokens),
      seed: 7,
      arrivedAt: performance.now(),
      signal: new AbortController().signal,
      onPrefill: (p) => (prefill = p),
      onAligned: (n) => (aligned += n),
      ...extra,
    };
    for await (const chunk of engine.generate(request)) {
      tokens.push(...chunk);
      // The worker stops reading at a stop token, as generate-service does.
      if (chunk.some((t) => request.stopTokens.has(t))) break;
    }
    return { tokens, prefill, aligned };
  }

  const turn = (text: string) => [
    ...profile.renderEntry({ kind: 'message', role: 'user', text }),
    ...profile.renderGenerationPrompt(),
  ];

  it('samples real tokens of the model, reproducibly under a seed', async () => {
    const prompt = [...profile.renderHeader({ tools: [] }), ...turn('Once upon a time')];
    const a = await run(prompt, { sessionKey: 'seeded-a' });
    const b = await run(prompt, { sessionKey: 'seeded-b' });
    expect(a.tokens.length).toBeGreaterThan(0);
    expect(a.tokens.every((t) => t >= 0 && t < profile.vocabSize)).toBe(true);
    expect(b.tokens).toEqual(a.tokens);
  });

  /** The next turn's prompt as the edge renders it: the conversation so far, the answer read back. */
  const next = (entries: ConversationEntry[], answer: number[], text: string) => {
    const all = [...entries, completionToEntry(profile, answer, 'c'), user(text)];
    return { all, prompt: profile.render({ tools: [] }, all) };
  };
  const user = (text: string): ConversationEntry => ({ kind: 'message', role: 'user', text });
  /** What a continuation must evaluate: its new message and the generation prompt, nothing before. */
  const newTokensOf = (text: string) =>
    profile.renderEntry(user(text)).length + profile.renderGenerationPrompt().length;

  it('evaluates only the new tokens of a continuation and reports the rest as cached', async () => {
    const first = profile.render({ tools: [] }, [user('Tom had a red ball.')]);
    const one = await run(first, { sessionKey: 'cont' });
    const second = next([user('Tom had a red ball.')], one.tokens, 'Where did it go?').prompt;
    const two = await run(second, { sessionKey: 'cont' });
    // Other tests' sequences may share the header by content; the first turn evaluates the rest.
    expect(one.prefill!.cachedTokens + one.prefill!.evaluatedTokens).toBe(first.length);
    expect(one.prefill!.evaluatedTokens).toBeGreaterThan(0);
    // After the first turn the KV state was aligned with the template's rendering of its answer:
    // the second turn evaluates its own message and nothing of the first answer.
    expect(two.prefill!.evaluatedTokens).toBe(newTokensOf('Where did it go?'));
    expect(two.prefill!.cachedTokens + two.prefill!.evaluatedTokens).toBe(second.length);
  });

  it('keeps two concurrent sessions in separate sequences', async () => {
    const a = profile.render({ tools: [] }, [user('A cat sat.')]);
    const b = profile.render({ tools: [] }, [user('A dog ran far away.')]);
    const [ra, rb] = await Promise.all([run(a, { sessionKey: 'sa' }), run(b, { sessionKey: 'sb' })]);
    const [ra2, rb2] = await Promise.all([
      run(next([user('A cat sat.')], ra.tokens, 'Then?').prompt, { sessionKey: 'sa' }),
      run(next([user('A dog ran far away.')], rb.tokens, 'Then?').prompt, { sessionKey: 'sb' }),
    ]);
    expect(ra2.prefill!.evaluatedTokens).toBe(newTokensOf('Then?'));
    expect(rb2.prefill!.evaluatedTokens).toBe(newTokensOf('Then?'));
  });

  it('stops evaluating as soon as the caller aborts', async () => {
    const controller = new AbortController();
    const tokens: number[] = [];
    const prompt = [...profile.renderHeader({ tools: [] }), ...turn('Lily went to the park.')];
    const request: EngineRequest = {
      prompt: Uint32Array.from(prompt),
      cachedTokens: 0,
      maxOutputTokens: 400,
      stopTokens: new Set(),
      arrivedAt: 0,
      signal: controller.signal,
    };
    for await (const chunk of engine.generate(request)) {
      tokens.push(...chunk);
      if (tokens.length >= 3) controller.abort();
    }
    expect(tokens.length).toBe(3);
    // The sequence is free again at once: another call gets it without waiting.
    await expect(run(prompt, { sessionKey: 'after-abort' })).resolves.toBeDefined();
  });

  it('samples a forced tool call under the schema grammar, so it parses and fits the schema', async () => {
    const parameters = {
      type: 'object' as const,
      properties: { city: { type: 'string' as const, maxLength: 40 }, days: { type: 'integer' as const } },
      required: ['city', 'days'],
    };
    const header = { tools: [{ name: 'get_weather', parameters }], toolChoice: 'required' as const };
    const prompt = [...profile.renderHeader(header), ...turn('Weather in Paris?')];
    const { tokens } = await run(prompt, { maxOutputTokens: 200, sessionKey: 'tool' });
    const parser = profile.createOutputParser();
    const events: ParseEvent[] = [...parser.push(tokens), ...parser.finish()];
    expect(events[0]).toEqual({ type: 'item_start', item: { kind: 'function_call', name: 'get_weather' } });
    const args = events
      .filter((e): e is Extract<ParseEvent, { type: 'delta' }> => e.type === 'delta')
      .map((e) => e.text)
      .join('');
    expect(schemaProblems(parameters, JSON.parse(args))).toEqual([]);
  });

  it('samples a text.format json_schema answer under its grammar', async () => {
    const schema = {
      type: 'object' as const,
      properties: { title: { type: 'string' as const, maxLength: 20 }, happy: { type: 'boolean' as const } },
      required: ['title', 'happy'],
    };
    const prompt = [
      ...profile.renderHeader({ tools: [], responseFormat: { name: 'story', schema } }),
      ...turn('A short story.'),
    ];
    const { tokens } = await run(prompt, { maxOutputTokens: 120, sessionKey: 'json' });
    const parser = profile.createOutputParser();
    const events: ParseEvent[] = [...parser.push(tokens), ...parser.finish()];
    expect(events[0]).toEqual({ type: 'item_start', item: { kind: 'message' } });
    const text = events
      .filter((e): e is Extract<ParseEvent, { type: 'delta' }> => e.type === 'delta')
      .map((e) => e.text)
      .join('');
    expect(schemaProblems(schema, JSON.parse(text))).toEqual([]);
  });

  /** Two turns of one session, the second continuing what the first sampled. */
  async function continuation(key: string) {
    const first = profile.render({ tools: [] }, [user('Tom had a red ball.')]);
    const one = await run(first, { sessionKey: key });
    const second = next([user('Tom had a red ball.')], one.tokens, 'Where did it go?').prompt;
    const two = await run(second, { sessionKey: key });
    return { first, one, second, two };
  }

  /** What a true skip looks like: everything but the new message was held. */
  function expectTrueSkip({ second, two }: Awaited<ReturnType<typeof continuation>>): void {
    expect(two.prefill!.evaluatedTokens).toBe(newTokensOf('Where did it go?'));
    expect(two.prefill!.cachedTokens).toBe(second.length - two.prefill!.evaluatedTokens);
  }

  describe('what it reports as skipped is what node-llama-cpp did not evaluate', () => {
    let lib: Awaited<ReturnType<typeof loadNodeLlamaCpp>>;
    beforeAll(async () => (lib = await loadNodeLlamaCpp()));
    afterEach(() => jest.restoreAllMocks());

    it('reports the true skip of an honest engine', async () => {
      expectTrueSkip(await continuation('honest'));
    });

    it('fails that check when llama.cpp re-evaluates the held prefix behind the plan (the meter counts it)', async () => {
      const proto = lib.LlamaContextSequence.prototype;
      const evaluate = proto.evaluate;
      // A wrong skip the old accounting could not see: the plan skips the held prefix, but the
      // sequence evaluates it again first (as node-llama-cpp does when it cannot reuse KV cells).
      jest.spyOn(proto, 'evaluate').mockImplementation(function (this: typeof proto, tokens, options) {
        const held = this.contextTokens;
        return (async function* (sequence) {
          await sequence.clearHistory();
          await sequence.evaluateWithoutGeneratingNewTokens(held);
          return yield* evaluate.call(sequence, tokens, options);
        })(this);
      });
      const result = await continuation('redone');
      expect(() => expectTrueSkip(result)).toThrow();
      expect(result.two.prefill!.evaluatedTokens).toBe(result.second.length); // every token, as metered
    });

    it('refuses to sample when the KV state does not hold the prompt (a skip of tokens it lost)', async () => {
      const proto = lib.LlamaContextSequence.prototype;
      const erase = proto.eraseContextTokenRanges;
      const prompt = [...profile.renderHeader({ tools: [] }), ...turn('A long story about a big red ball.')];
      await run(prompt, { sessionKey: 'lost' });
      jest.spyOn(proto, 'eraseContextTokenRanges').mockImplementation(function (this: typeof proto) {
        return erase.call(this, [{ start: 0, end: this.nextTokenIndex }]);
      });
      // The same session, a different last message: the engine erases the tail and keeps the rest.
      const other = [...profile.renderHeader({ tools: [] }), ...turn('A long story about a small red ball.')];
      await expect(run(other, { sessionKey: 'lost' })).rejects.toThrow('the KV state holds');
    });
  });

  const weather = {
    type: 'object',
    properties: { city: { type: 'string', maxLength: 24 }, days: { type: 'integer', minimum: 1, maximum: 14 } },
    required: ['city', 'days'],
    additionalProperties: false,
  } as const;
  const weatherHeader = {
    tools: [{ name: 'get_weather', parameters: weather as unknown as Record<string, unknown> }],
    toolChoice: 'required' as const,
  };

  it('samples forced calls whose arguments satisfy the schema, bounds included, written as the template renders them', async () => {
    for (let seed = 1; seed <= 6; seed++) {
      const prompt = [...profile.renderHeader(weatherHeader), ...turn('Weather in Paris for a week?')];
      const { tokens } = await run(prompt, { maxOutputTokens: 200, seed, temperature: 1.5, sessionKey: `w${seed}` });
      const entry = completionToEntry(profile, tokens, 'call_1');
      if (entry.kind !== 'function_call') throw new Error(`not a call: ${profile.decode(tokens)}`);
      expect(schemaProblems(weather, JSON.parse(entry.arguments))).toEqual([]);
      // The whole completion is the template's rendering of the call, end of turn included.
      expect(profile.decode(tokens)).toBe(profile.decode(profile.renderCompletion(entry)));
      expect(profile.decode(tokens)).toContain(`{"name": "get_weather", "arguments": ${entry.arguments}}`);
    }
  }, 60_000);

  it('reuses a sampled tool call as the next prompt: the next turn evaluates only the tool output', async () => {
    const user: ConversationEntry = { kind: 'message', role: 'user', text: 'Weather in Oslo?' };
    const first = profile.render(weatherHeader, [user]);
    const one = await run(first, { maxOutputTokens: 200, sessionKey: 'reuse' });
    const call = completionToEntry(profile, one.tokens, 'call_1');
    if (call.kind !== 'function_call') throw new Error('expected a call');
    const output = toolOutputFor(call, 'Sunny, 21 C');
    // What the edge sends next: the whole conversation rendered by the template, not the tokens sampled.
    const second = profile.render(weatherHeader, [user, call, output]);
    const two = await run(second, { maxOutputTokens: 4, sessionKey: 'reuse' });
    const newTokens = profile.renderEntry(output).length + profile.renderGenerationPrompt().length;
    expect(two.prefill!.evaluatedTokens).toBe(newTokens);
    expect(two.prefill!.cachedTokens).toBe(second.length - newTokens);
  }, 30_000);

  it('samples only schema-valid JSON under grammars llama.cpp builds from any enforceable schema', async () => {
    await fc.assert(
      fc.asyncProperty(enforceableSchema, fc.integer({ min: 1, max: 1000 }), async (schema, seed) => {
        const prompt = [
          ...profile.renderHeader({ tools: [], responseFormat: { name: 'out', schema } }),
          ...turn('Answer.'),
        ];
        // A deeply nested schema's header can outgrow the 1,024-token window (1,029 once in CI): the
        // engine then refuses it before sampling (its own spec), which is not what this property checks.
        fc.pre(prompt.length < engine.contextSize);
        const { tokens } = await run(prompt, { maxOutputTokens: 300, seed, temperature: 1.2, sessionKey: 'any' });
        const text = profile.decode(tokens);
        // A cut is the one way out of the grammar that is not a whole value: by the token limit, or by
        // the context window, which a nested schema's header can fill first (~870 of 1,024 tokens).
        if (tokens.length >= Math.min(300, engine.contextSize - prompt.length)) return;
        expect(schemaProblems(schema, JSON.parse(text))).toEqual([]);
      }),
      // Each run samples up to 300 tokens under a grammar on one llama.cpp thread (0.02–1.8 s idle, 400
      // runs in ~4 min); 8 keep the file inside its budget on a loaded 2-core machine. No shrinking:
      // shrinking replays the model hundreds of times, which turned a failure into a 600 s timeout in
      // CI; the first counterexample, printed whole, is what a reader needs. The budget is a hang guard.
      { numRuns: 8, endOnFailure: true },
    );
  }, 600_000);

  it('says when it stopped because the context window was full, and only then', async () => {
    // A grammar that cannot end within the few tokens left, so the window, not the model, ends it.
    const schema = { type: 'array', items: { type: 'integer' }, minItems: 400 } as const;
    const header = profile.renderHeader({ tools: [], responseFormat: { name: 'n', schema } });
    let words = 0;
    let prompt = [...header, ...turn('')];
    while (prompt.length < engine.contextSize - 8) prompt = [...header, ...turn('Lily ran. '.repeat(++words))];
    const room = engine.contextSize - prompt.length;
    let full = 0;
    const cut = await run(prompt, { maxOutputTokens: 50, onContextFull: () => full++, sessionKey: 'window' });
    expect(cut.tokens).toHaveLength(room);
    expect(full).toBe(1);
    full = 0;
    const short = [...header, ...turn('Lily ran.')];
    const limited = await run(short, { maxOutputTokens: 3, onContextFull: () => full++, sessionKey: 'window' });
    expect(limited.tokens).toHaveLength(3);
    expect(full).toBe(0);
  });

  it('refuses a prompt that leaves no room in the context window', async () => {
    await expect(run(new Array(engine.contextSize).fill(100))).rejects.toMatchObject({
      code: 'context_length_exceeded',
    });
  });
});
