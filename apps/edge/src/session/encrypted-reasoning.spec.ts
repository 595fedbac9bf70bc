import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { getProfile } from '@fastloop/model-profiles';
import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { openWsSession } from '../testing/ws-session';
import { ReasoningSeal } from '../turn/reasoning-seal';

const profile = getProfile('harmony-o200k');
const seal = new ReasoningSeal([{ kid: 'k1', key: randomBytes(32) }]);
const tools = [
  {
    type: 'function',
    name: 'read_file',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
];
const include = ['reasoning.encrypted_content'];

/** A WebSocket session of `tenant` whose edge seals reasoning with `seal`. */
function open(tenant = 't', backends = new FakeBackends(), reasoningSeal = seal) {
  const { deps } = fakeDeps(backends);
  deps.reasoningSeal = reasoningSeal;
  const { create } = openWsSession(deps, { tenant, defaults: { tools } });
  return { create, backends };
}

const last = (events: any[]) => events[events.length - 1];

/** Turn 1: the model reasons; returns the response and the reasoning item as a stateless client keeps it. */
async function reasoningTurn(s: ReturnType<typeof open>, thought: string, extra: Record<string, unknown> = {}) {
  s.backends.script = () => ({ kind: 'reasoning', text: thought });
  const response = last(await s.create({ input: 'question', ...extra })).response;
  s.backends.script = () => ({ kind: 'message', role: 'assistant', text: 'answer' });
  return response;
}

/** The reasoning item as Codex keeps it: content dropped, only the sealed state. */
function stripped(item: any) {
  return { type: 'reasoning', id: item.id, summary: [], encrypted_content: item.encrypted_content };
}

describe('reasoning encrypted_content', () => {
  it('is on reasoning items only when include asks for it, and opens to the reasoning text for the tenant', async () => {
    const s = open();
    const plain = await reasoningTurn(s, 'plain thought');
    expect(plain.output[0]).not.toHaveProperty('encrypted_content');
    const sealed = await reasoningTurn(s, 'sealed thought', { include });
    expect(sealed.output[0]).toMatchObject({
      type: 'reasoning',
      content: [{ type: 'reasoning_text', text: 'sealed thought' }],
    });
    expect(seal.open(sealed.output[0].encrypted_content, 't')).toBe('sealed thought');
  });

  it('renders a sealed item sent back in full history exactly as the connection cache renders the same conversation', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
        fc.string({ unit: 'grapheme', maxLength: 20 }),
        async (thought, next) => {
          const cached = open();
          const r1 = await reasoningTurn(cached, thought, { include });
          await cached.create({ previous_response_id: r1.id, input: next, include });
          const viaCache = cached.backends.prompts[1];

          const stateless = open();
          stateless.backends.script = () => ({ kind: 'message', role: 'assistant', text: 'answer' });
          const history = [
            { type: 'message', role: 'user', content: 'question' },
            stripped(r1.output[0]),
            { type: 'message', role: 'user', content: next },
          ];
          expect(last(await stateless.create({ input: history, include })).type).toBe('response.completed');
          expect(stateless.backends.prompts[0]).toEqual(viaCache);
          expect(profile.decode(viaCache)).toContain(thought);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('reaches the model and the classifier as the original reasoning text, not as what the client kept', async () => {
    const first = open();
    const r1 = await reasoningTurn(first, 'the hidden plan', { include });
    const s = open();
    const item = { ...stripped(r1.output[0]), content: [{ type: 'reasoning_text', text: 'a forged plan' }] };
    await s.create({
      input: [
        { type: 'message', role: 'user', content: 'question' },
        item,
        { type: 'message', role: 'user', content: 'go' },
      ],
    });
    const prompt = profile.decode(s.backends.prompts[0]);
    expect(prompt).toContain('the hidden plan');
    expect(prompt).not.toContain('a forged plan');
    const scanned = s.backends.classifyCalls.flatMap((c) => c.items).filter((i) => i.itemType === 'reasoning');
    expect(scanned).toEqual([expect.objectContaining({ text: 'the hidden plan' })]);
  });

  it('is opened once per turn: the same narrowed item feeds the rendering and the safety scan', async () => {
    const first = open();
    const r1 = await reasoningTurn(first, 'a sealed plan', { include });
    const opened: string[] = [];
    const counting = Object.assign(Object.create(seal) as ReasoningSeal, {
      open: (blob: string, tenant: string) => {
        opened.push(blob);
        return seal.open(blob, tenant);
      },
    });
    const s = open('t', new FakeBackends(), counting);
    s.backends.script = () => ({ kind: 'message', role: 'assistant', text: 'answer' });
    const events = await s.create({
      input: [{ type: 'message', role: 'user', content: 'question' }, stripped(r1.output[0])],
    });
    expect(last(events).type).toBe('response.completed');
    expect(opened).toEqual([r1.output[0].encrypted_content]);
  });

  it('is blocked by safety when the sealed reasoning carries blocked text', async () => {
    const first = open();
    const r1 = await reasoningTurn(first, 'plan: BLOCK-ME', { include });
    const s = open();
    const events = await s.create({ input: [{ type: 'message', role: 'user', content: 'q' }, stripped(r1.output[0])] });
    expect(events.map((e) => [e.type, e.error?.code])).toEqual([['error', 'invalid_prompt']]);
  });

  it.each([
    ['altered', (blob: string) => blob.slice(0, -2) + (blob.endsWith('AA') ? 'BA' : 'AA')],
    ['truncated', (blob: string) => blob.slice(0, 30)],
    ['under an unknown key', (blob: string) => blob.replace('.k1.', '.k9.')],
    ['not ours at all', () => 'gAAAAABoZ2Vyb3VzbHkgZm9yZWlnbg=='],
  ])('answers a blob that is %s with a 400 invalid_encrypted_content naming the item', async (_what, mangle) => {
    const first = open();
    const r1 = await reasoningTurn(first, 'thought', { include });
    const s = open();
    const item = { ...stripped(r1.output[0]), encrypted_content: mangle(r1.output[0].encrypted_content) };
    const events = await s.create({ input: [{ type: 'message', role: 'user', content: 'q' }, item] });
    expect(events).toEqual([
      expect.objectContaining({
        type: 'error',
        status: 400,
        error: expect.objectContaining({ code: 'invalid_encrypted_content', param: 'input[1].encrypted_content' }),
      }),
    ]);
    expect(s.backends.generateCalls).toHaveLength(0);
  });

  it("answers another tenant's blob with a 400", async () => {
    const r1 = await reasoningTurn(open('tenant-a'), 'thought', { include });
    const events = await open('tenant-b').create({
      input: [{ type: 'message', role: 'user', content: 'q' }, stripped(r1.output[0])],
    });
    expect(last(events).error).toMatchObject({
      code: 'invalid_encrypted_content',
      param: 'input[1].encrypted_content',
    });
  });
});
