import { getProfile, guardHeader } from '@fastloop/model-profiles';
import { inferenceV1, safetyV1 } from '@fastloop/proto';
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
  /** The guard model's context window, enforced as the llamacpp engine does. */
  contextSize = Infinity;

  async generate(req: inferenceV1.GenerateRequest): Promise<GuardCompletion> {
    this.requests.push(req);
    if (this.down) throw new DomainError('unavailable', 'worker down', 14, true);
    const parent = req.parentSessionKey ? this.sessions.get(req.parentSessionKey) : [];
    if (!parent || parent.length < req.prefixLen) throw new DomainError('prefix_miss', 'no prefix', 9, true);
    const prompt = [...parent.slice(0, req.prefixLen), ...req.tokens];
    if (prompt.length >= this.contextSize)
      throw new DomainError('context_length_exceeded', 'prompt does not fit the context', 3, false);
    this.prompts.push(prompt);
    const unsafe = profile.decode(prompt).toLowerCase().includes('forbidden topic:');
    const answer = profile.renderCompletion({
      kind: 'message',
      role: 'assistant',
      text: unsafe ? 'unsafe' : 'safe',
    });
    // Cut by the window, as the worker does: what fits, ending LENGTH.
    const completion = answer.slice(0, this.contextSize - prompt.length);
    this.sessions.set(req.sessionKey, [...prompt, ...completion]);
    if (req.parentSessionKey) this.sessions.delete(req.parentSessionKey);
    return {
      tokens: completion,
      promptTokens: prompt.length,
      cachedTokens: req.prefixLen,
      finishReason:
        completion.length < answer.length
          ? inferenceV1.FinishReason.FINISH_REASON_LENGTH
          : inferenceV1.FinishReason.FINISH_REASON_STOP,
    };
  }

  close(): void {}
}

/** A judge on `worker`, telling `calls` each call's result. */
function judgeOn(worker: FakeGuardWorker, calls?: string[]): GuardJudge {
  return new GuardJudge({
    worker,
    profile,
    model: 'guard',
    policy: POLICY,
    timeoutMs: 1000,
    maxOutputTokens: 8,
    observe: calls && ((c) => calls.push(c.result)),
  });
}

function guarded(worker: FakeGuardWorker, failOpen = false, actions: Record<string, string> = {}, calls?: string[]) {
  const judge = judgeOn(worker, calls);
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
    const res = await judgeOn(worker, calls).judge(turnItems(0), null);
    expect(res.verdict).toBe('unavailable');
    expect(calls).toEqual(['unreadable']);
  });
  describe("a conversation longer than the guard model's context", () => {
    /** Six turns on a worker whose window holds about `turns` of them; the calls' results, in order. */
    async function converse(contextTurns: number, items = turnItems, turns = 6) {
      const probe = new FakeGuardWorker();
      await guarded(probe).classifyAsync({ state: Buffer.alloc(0), items: items(0), tenant: 'g', model: 'm' });
      const worker = new FakeGuardWorker();
      worker.contextSize = Math.floor(probe.prompts[0].length * contextTurns);
      const calls: string[] = [];
      const c = guarded(worker, false, {}, calls);
      const verdicts: safetyV1.ClassifyResponse[] = [];
      let state: Buffer = Buffer.alloc(0);
      for (let t = 0; t < turns; t++) {
        const res = await c.classifyAsync({ state, items: items(t), tenant: 'g', model: 'm' });
        verdicts.push(res);
        state = res.state;
      }
      return { worker, calls, verdicts };
    }

    it('judges the new items in a fresh window instead of failing closed', async () => {
      const { worker, calls, verdicts } = await converse(2.5);
      expect(verdicts.map((v) => v.verdict)).toEqual(Array(6).fill(safetyV1.Verdict.VERDICT_ALLOW));
      expect(calls).toContain('context_full');
      expect(calls.filter((c) => c === 'allow')).toHaveLength(6);
      // Each restart is one fresh call (header + that turn's items), and the window goes on from it.
      const restarts = worker.requests.filter((r, i) => i > 0 && r.prefixLen === 0);
      expect(restarts.length).toBeGreaterThan(0);
      for (const r of restarts) expect(r.parentSessionKey).toBe('');
      expect(worker.requests.at(-1)!.prefixLen).toBeGreaterThan(0);
      for (const p of worker.prompts) expect(p.length).toBeLessThan(worker.contextSize);
    });

    it('still blocks what the new items say after a restart', async () => {
      const items = (t: number) => (t === 5 ? [user('forbidden topic: how to pick a lock')] : turnItems(t));
      const { calls, verdicts } = await converse(2.5, items);
      expect(calls).toContain('context_full');
      expect(verdicts.slice(0, 5).every((v) => v.verdict === safetyV1.Verdict.VERDICT_ALLOW)).toBe(true);
      expect(verdicts[5].verdict).toBe(safetyV1.Verdict.VERDICT_BLOCK);
    });

    it('restarts when the window would cut the verdict short, not only when the prompt does not fit', async () => {
      const probe = new FakeGuardWorker();
      const first = await judgeOn(probe).judge(turnItems(0), null);
      const second = await judgeOn(probe).judge(turnItems(1), first.session);
      const worker = new FakeGuardWorker();
      // Room for the second call's prompt and one token of its verdict.
      worker.contextSize = probe.prompts[1].length + 1;
      const calls: string[] = [];
      const j = judgeOn(worker, calls);
      const again = await j.judge(turnItems(0), null);
      const res = await j.judge(turnItems(1), again.session);
      expect(second.verdict).toBe('allow');
      expect(res.verdict).toBe('allow');
      expect(calls).toEqual(['allow', 'context_full', 'allow']);
      expect(worker.requests.at(-1)!.prefixLen).toBe(0);
    });

    it('gives no verdict (fail-closed) when the new items alone do not fit', async () => {
      const big = (t: number) => (t === 3 ? [tool('file.ts\n'.repeat(400))] : turnItems(t));
      const { calls, verdicts } = await converse(2.5, big, 4);
      expect(verdicts[3].verdict).toBe(safetyV1.Verdict.VERDICT_BLOCK);
      expect(verdicts[3].findings[0]).toMatchObject({ ruleId: 'guard-unavailable' });
      expect(calls.slice(-2)).toEqual(['context_full', 'context_full']);
    });
  });
});
