import { getProfile, guardHeader } from '@fastloop/model-profiles';
import { safetyV1, type inferenceV1 } from '@fastloop/proto';
import { DomainError } from '@fastloop/service-kit';
import { Classifier } from '../classifier';
import { DEFAULT_ACTIONS, PolicyBook } from '../policy';
import { awsAccessKeyId } from '../testing/fake-secrets';
import { GuardJudge, readVerdict } from './guard-judge';
import type { GuardCompletion, GuardWorker } from './guard-worker';

const profile = getProfile('harmony-o200k');
const POLICY = 'Answer safe or unsafe. Unsafe: anything about the forbidden topic.';

/**
 * A worker playing a deterministic guard: it keeps sessions as the inference service does (a
 * request names what it should hold with parent_session_key + prefix_len, and a worker without
 * that prefix answers prefix_miss) and answers `unsafe` when the whole conversation it holds
 * mentions the forbidden term.
 */
class FakeGuardWorker implements GuardWorker {
  readonly sessions = new Map<string, number[]>();
  readonly requests: inferenceV1.GenerateRequest[] = [];
  readonly prompts: number[][] = [];
  down = false;

  async generate(req: inferenceV1.GenerateRequest): Promise<GuardCompletion> {
    this.requests.push(req);
    if (this.down) throw new DomainError('unavailable', 'worker down', 14, true);
    const parent = req.parentSessionKey ? this.sessions.get(req.parentSessionKey) : [];
    if (!parent || parent.length < req.prefixLen) throw new DomainError('prefix_miss', 'no prefix', 9, true);
    const prompt = [...parent.slice(0, req.prefixLen), ...req.tokens];
    this.prompts.push(prompt);
    const unsafe = profile.decode(prompt).toLowerCase().includes('forbidden topic:');
    const completion = profile.renderCompletion({
      kind: 'message',
      role: 'assistant',
      text: unsafe ? 'unsafe' : 'safe',
    });
    this.sessions.set(req.sessionKey, [...prompt, ...completion]);
    if (req.parentSessionKey) this.sessions.delete(req.parentSessionKey);
    return { tokens: completion, promptTokens: prompt.length, cachedTokens: req.prefixLen };
  }

  close(): void {}
}

function guarded(worker: FakeGuardWorker, failOpen = false, actions: Record<string, string> = {}) {
  const judge = new GuardJudge({
    worker,
    profile,
    model: 'guard',
    policy: POLICY,
    timeoutMs: 1000,
    maxOutputTokens: 8,
  });
  const policies = new PolicyBook({
    policies: { tenants: { g: { terms: [], regexes: [], actions, guard: true } }, models: {} },
    defaultActions: DEFAULT_ACTIONS,
    injectionThreshold: 10,
  });
  return new Classifier({
    stateSecret: 'guard-test-secret-value',
    maxItemBytes: 1 << 20,
    policies,
    guard: { judge, failOpen },
  });
}

const user = (text: string): safetyV1.SafetyItem => ({
  itemType: 'message',
  role: 'user',
  text,
  source: safetyV1.ItemSource.ITEM_SOURCE_INPUT,
});
const tool = (text: string): safetyV1.SafetyItem => ({
  itemType: 'function_call_output',
  role: '',
  text,
  source: safetyV1.ItemSource.ITEM_SOURCE_TOOL,
});
const turnItems = (t: number) => [user(`question ${t}: how do I list files?`), tool(`file-${t}.ts\n`.repeat(20))];

describe('GuardJudge through Generate sessions', () => {
  it('prefills only the new items each turn while the guard reads the whole conversation', async () => {
    const worker = new FakeGuardWorker();
    const c = guarded(worker);
    let state = Buffer.alloc(0);
    const all: safetyV1.SafetyItem[] = [];
    for (let t = 0; t < 8; t++) {
      const items = turnItems(t);
      all.push(...items);
      const res = await c.classifyAsync({ state, items, tenant: 'g', model: 'm' });
      expect(res.verdict).toBe(safetyV1.Verdict.VERDICT_ALLOW);
      state = Buffer.from(res.state);
      const req = worker.requests.at(-1)!;
      // What the worker holds is exactly the guard conversation rendered from scratch.
      const entries = all.map((i) => ({
        kind: 'message' as const,
        role: 'user' as const,
        text: `[${i.itemType === 'message' ? 'input' : 'tool'}] ${i.text}`,
      }));
      expect(worker.prompts.at(-1)).toEqual(profile.render(guardHeader(POLICY), entries));
      expect(JSON.parse(req.constraints!.responseFormatJson)).toMatchObject({
        type: 'json_schema',
        schema: { enum: ['safe', 'unsafe'] },
      });
      if (t > 0) {
        expect(req.parentSessionKey).toBe(worker.requests.at(-2)!.sessionKey);
        expect(req.prefixLen).toBeGreaterThan(0);
      }
    }
    const sent = worker.requests.map((r) => r.tokens.length);
    // Turn 8 sends about what turn 2 sent, a small part of the whole guard prompt.
    expect(Math.abs(sent[7] - sent[1])).toBeLessThan(10);
    expect(sent[7] * 4).toBeLessThan(worker.prompts.at(-1)!.length);
  });

  it('blocks when the guard answers unsafe, naming the new items but not their text', async () => {
    const c = guarded(new FakeGuardWorker());
    const first = await c.classifyAsync({ state: Buffer.alloc(0), items: turnItems(0), tenant: 'g', model: 'm' });
    const res = await c.classifyAsync({
      state: first.state,
      items: [user('tell me about the forbidden topic: details')],
      tenant: 'g',
      model: 'm',
    });
    expect(res.verdict).toBe(safetyV1.Verdict.VERDICT_BLOCK);
    expect(res.findings[0]).toMatchObject({
      ruleId: 'guard-model',
      itemIndex: 2,
      endItemIndex: 2,
      action: safetyV1.Action.ACTION_BLOCK,
    });
    expect(res.findings[0].message).not.toContain('forbidden');
  });

  it('takes the policy category action for an unsafe verdict: flag records it and lets the turn through', async () => {
    const c = guarded(new FakeGuardWorker(), false, { policy: 'flag' });
    const res = await c.classifyAsync({
      state: Buffer.alloc(0),
      items: [user('the forbidden topic: details')],
      tenant: 'g',
      model: 'm',
    });
    expect(res.verdict).toBe(safetyV1.Verdict.VERDICT_ALLOW);
    expect(res.findings[0]).toMatchObject({ ruleId: 'guard-model', action: safetyV1.Action.ACTION_FLAG });
  });

  it('does not ask the guard when the rules already block, nor for tenants without a guard', async () => {
    const worker = new FakeGuardWorker();
    const c = guarded(worker);
    await c.classifyAsync({ state: Buffer.alloc(0), items: [user(`${awsAccessKeyId()} `)], tenant: 'g', model: 'm' });
    await c.classifyAsync({ state: Buffer.alloc(0), items: [user('hello')], tenant: 'other', model: 'm' });
    expect(worker.requests).toHaveLength(0);
  });

  it('answers a lost session with invalid_safety_state, and a fresh classification rebuilds it', async () => {
    const worker = new FakeGuardWorker();
    const c = guarded(worker);
    const first = await c.classifyAsync({ state: Buffer.alloc(0), items: turnItems(0), tenant: 'g', model: 'm' });
    worker.sessions.clear(); // the worker restarted
    await expect(
      c.classifyAsync({ state: first.state, items: turnItems(1), tenant: 'g', model: 'm' }),
    ).rejects.toMatchObject({ code: 'invalid_safety_state' });
    const again = await c.classifyAsync({
      state: Buffer.alloc(0),
      items: [...turnItems(0), ...turnItems(1)],
      tenant: 'g',
      model: 'm',
    });
    expect(again.verdict).toBe(safetyV1.Verdict.VERDICT_ALLOW);
    expect(worker.requests.at(-1)!.prefixLen).toBe(0);
  });

  it.each([
    [false, safetyV1.Verdict.VERDICT_BLOCK, safetyV1.Action.ACTION_BLOCK],
    [true, safetyV1.Verdict.VERDICT_ALLOW, safetyV1.Action.ACTION_FLAG],
  ])('with fail-open %s, a guard that cannot answer gives %s', async (failOpen, verdict, action) => {
    const worker = new FakeGuardWorker();
    worker.down = true;
    const res = await guarded(worker, failOpen).classifyAsync({
      state: Buffer.alloc(0),
      items: turnItems(0),
      tenant: 'g',
      model: 'm',
    });
    expect(res.verdict).toBe(verdict);
    expect(res.findings[0]).toMatchObject({ ruleId: 'guard-unavailable', action });
  });

  it('reads a one-word verdict and nothing else', () => {
    expect(readVerdict('unsafe')).toBe('block');
    expect(readVerdict('"unsafe"')).toBe('block');
    expect(readVerdict('<|channel|>final<|message|>Safe.')).toBe('allow');
    expect(readVerdict('something else')).toBeUndefined();
    expect(readVerdict('safe, but unsafe')).toBeUndefined();
  });

  it('judges an answer that is not a verdict like an unavailable guard', async () => {
    const worker = new FakeGuardWorker();
    const generate = worker.generate.bind(worker);
    worker.generate = async (req) => ({ ...(await generate(req)), tokens: profile.encodeText('Once upon a time') });
    const calls: string[] = [];
    const judge = new GuardJudge({
      worker,
      profile,
      model: 'guard',
      policy: POLICY,
      timeoutMs: 1000,
      maxOutputTokens: 8,
      observe: (c) => calls.push(c.result),
    });
    const res = await judge.judge(turnItems(0), null);
    expect(res.verdict).toBe('unavailable');
    expect(calls).toEqual(['unreadable']);
  });
});
