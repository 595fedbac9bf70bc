import { getProfile, type ConversationEntry } from '@fastloop/model-profiles';
import { inferenceV1 } from '@fastloop/proto';
import { callUnary } from '@fastloop/service-kit';
import { extendBlockHashes, saltSeed } from './block-hash';
import { generate, startTestWorker, type TestWorker } from './testing/test-worker';

const profile = getProfile('harmony-o200k');
const user = (text: string): ConversationEntry => ({ kind: 'message', role: 'user', text });
// Several full 64-token blocks, so content matching has something to find.
const secret = profile.render(
  {
    instructions: Array.from({ length: 60 }, (_, i) => `Runbook step ${i}: rotate key ${i * 7}.`).join(' '),
    tools: [],
  },
  [user('the launch code is 7421')],
);

function forget(
  t: TestWorker,
  request: Partial<inferenceV1.ForgetSessionRequest>,
): Promise<inferenceV1.ForgetSessionResponse> {
  return callUnary(t.client.forgetSession, t.client, inferenceV1.ForgetSessionRequest.fromPartial(request), {
    deadlineMs: 5_000,
  });
}

describe('cache_salt scopes prefix reuse per tenant', () => {
  let t: TestWorker;
  beforeEach(async () => {
    t = await startTestWorker({ SIM_ANSWER_WORDS: '5' });
  });
  afterEach(() => t.close());

  it('never reports another salt’s prompt as cached, while the same salt still reuses it', async () => {
    expect(secret.length).toBeGreaterThan(256);
    await generate(t.client, { sessionKey: 'a-1', cacheSalt: 'tenant-a', tokens: secret }).result;
    // Other tenants probe with the exact same prompt and with shorter prefixes of it (each its
    // own tenant, so no probe finds what an earlier probe left).
    for (const end of [secret.length, 200, 130, 65]) {
      const probe = await generate(t.client, {
        sessionKey: `b-${end}`,
        cacheSalt: `tenant-b${end}`,
        tokens: secret.slice(0, end),
      }).result;
      expect(probe.done?.cachedTokens).toBe(0);
    }
    const again = await generate(t.client, { sessionKey: 'a-2', cacheSalt: 'tenant-a', tokens: secret }).result;
    expect(again.done?.cachedTokens).toBe(secret.length);
  });

  it('does not let a session key be used under another salt', async () => {
    const first = await generate(t.client, { sessionKey: 'resp_a', cacheSalt: 'tenant-a', tokens: secret }).result;
    const held = secret.length + first.tokens.length;
    const cross = generate(t.client, {
      sessionKey: 'resp_b',
      parentSessionKey: 'resp_a',
      cacheSalt: 'tenant-b',
      prefixLen: held,
      tokens: [200006],
    }).result;
    await expect(cross).rejects.toMatchObject({ code: 'prefix_miss' });
    const own = await generate(t.client, {
      sessionKey: 'resp_a2',
      parentSessionKey: 'resp_a',
      cacheSalt: 'tenant-a',
      prefixLen: held,
      tokens: [200006],
    }).result;
    expect(own.done?.cachedTokens).toBe(held);
  });

  it('forgets a session and its content on ForgetSession (a prompt blocked after the call started)', async () => {
    await generate(t.client, { sessionKey: 'blocked', cacheSalt: 'tenant-a', tokens: secret }).result;
    expect(await forget(t, { sessionKey: 'blocked', cacheSalt: 'tenant-b' })).toEqual({ forgotten: false });
    expect(await forget(t, { sessionKey: 'blocked', cacheSalt: 'tenant-a' })).toEqual({ forgotten: true });
    const after = await generate(t.client, { sessionKey: 'next', cacheSalt: 'tenant-a', tokens: secret }).result;
    expect(after.done?.cachedTokens).toBe(0);
  });

  it('tells on the first chunk what was prefilled, so a caller cut off before Done can bill it', async () => {
    await generate(t.client, { sessionKey: 'p-1', cacheSalt: 's', tokens: secret }).result;
    const call = t.client.generate(
      inferenceV1.GenerateRequest.fromPartial({ sessionKey: 'p-2', cacheSalt: 's', tokens: secret }),
    );
    const chunks: inferenceV1.TokenChunk[] = [];
    await new Promise<void>((resolve, reject) => {
      call.on('data', (r: inferenceV1.GenerateResponse) => r.event?.$case === 'chunk' && chunks.push(r.event.value));
      call.on('end', resolve);
      call.on('error', reject);
    });
    expect(chunks[0]).toMatchObject({ promptTokens: secret.length, cachedTokens: secret.length });
    for (const later of chunks.slice(1)) expect(later).toMatchObject({ promptTokens: 0, cachedTokens: 0 });
  });
});

describe('saltSeed', () => {
  it('keeps the unsalted hashes for the empty salt and changes every block hash for any other', () => {
    const tokens = Array.from({ length: 256 }, (_, i) => i);
    expect(saltSeed('')).toBe(0);
    const plain = extendBlockHashes(tokens);
    const salted = extendBlockHashes(tokens, undefined, 0, undefined, saltSeed('tenant-a'));
    for (let i = 0; i < plain.length; i++) expect(salted[i]).not.toBe(plain[i]);
    expect(saltSeed('tenant-a')).toBe(saltSeed('tenant-a'));
    expect(saltSeed('tenant-a')).not.toBe(saltSeed('tenant-b'));
    expect(Number.isSafeInteger(saltSeed('x'))).toBe(true);
  });
});
