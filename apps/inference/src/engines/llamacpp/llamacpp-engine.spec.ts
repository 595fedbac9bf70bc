import pino from 'pino';
import { ggufProfileId, resolveProfile, type ModelProfile, type ParseEvent } from '@fastloop/model-profiles';
import type { EnginePrefill, EngineRequest } from '../../engine';
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
      contextSize: 0,
      threads: 1,
      gpuLayers: 0,
      logger: pino({ level: 'silent' }),
    });
  });
  afterAll(() => engine?.close());

  async function run(
    prompt: number[],
    extra: Partial<EngineRequest> = {},
  ): Promise<{ tokens: number[]; prefill?: EnginePrefill }> {
    let prefill: EnginePrefill | undefined;
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
      ...extra,
    };
    for await (const chunk of engine.generate(request)) tokens.push(...chunk);
    return { tokens, prefill };
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

  it('evaluates only the new tokens of a continuation and reports the rest as cached', async () => {
    const first = [...profile.renderHeader({ tools: [] }), ...turn('Tom had a red ball.')];
    const one = await run(first, { sessionKey: 'cont' });
    const second = [...first, ...one.tokens, ...turn('Where did it go?')];
    const two = await run(second, { sessionKey: 'cont' });
    // Other tests' sequences may share the header by content; the first turn evaluates the rest.
    expect(one.prefill!.cachedTokens + one.prefill!.evaluatedTokens).toBe(first.length);
    expect(one.prefill!.evaluatedTokens).toBeGreaterThan(0);
    // The KV state holds the prompt and every sampled token but the last (sampled, never fed back).
    expect(two.prefill!.cachedTokens).toBe(first.length + one.tokens.length - 1);
    expect(two.prefill!.cachedTokens + two.prefill!.evaluatedTokens).toBe(second.length);
  });

  it('keeps two concurrent sessions in separate sequences', async () => {
    const a = [...profile.renderHeader({ tools: [] }), ...turn('A cat sat.')];
    const b = [...profile.renderHeader({ tools: [] }), ...turn('A dog ran far away.')];
    const [ra, rb] = await Promise.all([run(a, { sessionKey: 'sa' }), run(b, { sessionKey: 'sb' })]);
    const [ra2, rb2] = await Promise.all([
      run([...a, ...ra.tokens, ...turn('Then?')], { sessionKey: 'sa' }),
      run([...b, ...rb.tokens, ...turn('Then?')], { sessionKey: 'sb' }),
    ]);
    expect(ra2.prefill!.cachedTokens).toBe(a.length + ra.tokens.length - 1);
    expect(rb2.prefill!.cachedTokens).toBe(b.length + rb.tokens.length - 1);
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
      properties: { city: { type: 'string' as const }, days: { type: 'integer' as const } },
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

  it('refuses a prompt that leaves no room in the context window', async () => {
    await expect(run(new Array(engine.contextSize).fill(100))).rejects.toMatchObject({
      code: 'context_length_exceeded',
    });
  });
});
