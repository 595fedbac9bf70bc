import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { getProfile, type ConversationEntry } from '@fastloop/model-profiles';
import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { ReasoningSeal } from '../turn/reasoning-seal';
import { ResponsesSession } from './responses-session';
import { ConnectionStateCache, StateCacheBudget } from './state-cache';

// The encrypted-reasoning round trip over whole agent loops: each turn the model reasons and then
// calls a tool (or answers), and the client either chains by id on its connection (the edge has the
// reasoning in its cache) or, stateless as Codex with store: false, resends the whole history with
// each reasoning item reduced to its encrypted_content. Every turn's prompt must be the same token
// for token, and the model must read every thought of the loop where harmony keeps it.
const profile = getProfile('harmony-o200k');
const seal = new ReasoningSeal([{ kid: 'k1', key: randomBytes(32) }]);
const include = ['reasoning.encrypted_content'];
const tools = ['read_file', 'shell'].map((name) => ({
  type: 'function',
  name,
  parameters: { type: 'object', properties: { arg: { type: 'string' } }, required: ['arg'] },
}));

/** One model turn: a thought, then a call to a tool (with its output to come) or a final answer. */
interface ModelTurn {
  thought: string;
  call?: { name: string; arg: string; output: string };
  answer: string;
}

function open(script: readonly ModelTurn[]) {
  const backends = new FakeBackends();
  backends.scriptEntries = (turn): ConversationEntry[] => {
    const t = script[turn];
    return [
      { kind: 'reasoning', text: t.thought },
      t.call
        ? { kind: 'function_call', name: t.call.name, arguments: JSON.stringify({ arg: t.call.arg }), callId: '' }
        : { kind: 'message', role: 'assistant', text: t.answer },
    ];
  };
  const { deps } = fakeDeps(backends);
  deps.reasoningSeal = seal;
  const events: any[] = [];
  const session = new ResponsesSession({
    deps,
    principal: { tenant: 't', keyId: 'k' },
    transport: 'websocket',
    cache: new ConnectionStateCache(new StateCacheBudget(1 << 30), 1 << 28),
    send: (e) => events.push(e),
    logger: deps.logger,
    maxQueued: 4,
  });
  const create = async (body: Record<string, unknown>) => {
    const from = events.length;
    session.receive(
      JSON.stringify({ type: 'response.create', model: 'fake-model', store: false, tools, include, ...body }),
    );
    await session.whenIdle();
    const terminal = events.slice(from).at(-1);
    expect(terminal?.type).toBe('response.completed');
    return terminal.response;
  };
  return { create, backends };
}

/** The output items as a stateless client resends them: reasoning reduced to its sealed state. */
function asResent(output: any[]): unknown[] {
  return output.map((item) =>
    item.type === 'reasoning'
      ? { type: 'reasoning', id: item.id, summary: [], encrypted_content: item.encrypted_content }
      : item,
  );
}

const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 });
const modelTurn: fc.Arbitrary<ModelTurn> = fc.record({
  thought: text,
  call: fc.option(fc.record({ name: fc.constantFrom('read_file', 'shell'), arg: text, output: text }), {
    nil: undefined,
    freq: 4,
  }),
  answer: text,
});

describe('reasoning encrypted_content over a multi-turn agent loop with tool calls', () => {
  it('gives the model the same prompt every turn whether the client chains by id or resends sealed history', async () => {
    await fc.assert(
      fc.asyncProperty(text, fc.array(modelTurn, { minLength: 1, maxLength: 5 }), async (question, script) => {
        const chained = open(script);
        const stateless = open(script);
        const history: unknown[] = [{ type: 'message', role: 'user', content: question }];
        let previous: any;
        let input: unknown[] = [...history];
        for (let turn = 0; turn < script.length; turn++) {
          const viaCache = await chained.create(
            previous ? { previous_response_id: previous.id, input } : { input: history },
          );
          const resent = await stateless.create({ input: history });
          expect(stateless.backends.prompts[turn]).toEqual(chained.backends.prompts[turn]);
          const kinds = ['reasoning', script[turn].call ? 'function_call' : 'message'];
          expect(resent.output.map((i: any) => i.type)).toEqual(kinds);
          expect(viaCache.output.map((i: any) => i.type)).toEqual(kinds);
          // Both sealed the same thought, and it opens for the tenant.
          const sealed = resent.output.find((i: any) => i.type === 'reasoning');
          expect(seal.open(sealed.encrypted_content, 't')).toBe(script[turn].thought);
          // The next turn: the tool's output (or a follow-up question after an answer).
          const call = resent.output.find((i: any) => i.type === 'function_call');
          const next = call
            ? { type: 'function_call_output', call_id: call.call_id, output: script[turn].call!.output }
            : { type: 'message', role: 'user', content: `and then? (${turn})` };
          const cachedCall = viaCache.output.find((i: any) => i.type === 'function_call');
          input = [cachedCall ? { ...next, call_id: cachedCall.call_id } : next];
          history.push(...asResent(resent.output), next);
          previous = viaCache;
        }
        // Within a tool-calling run harmony keeps the reasoning: the last prompt reads every thought
        // since the last answer, restored from encrypted_content on the stateless path.
        const last = profile.decode(stateless.backends.prompts[script.length - 1]);
        const sinceAnswer = script.slice(0, -1);
        const lastAnswer = sinceAnswer.map((t) => t.call === undefined).lastIndexOf(true);
        for (const t of sinceAnswer.slice(lastAnswer + 1)) expect(last).toContain(t.thought);
      }),
      { numRuns: 40 },
    );
  });
});
