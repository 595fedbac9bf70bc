import { GUARD_ANSWER_INSTRUCTION, guardHeader, isGuardPrompt, readGuardVerdict } from './guard-verdict';
import { getProfile } from './profile-registry';

describe('the guard verdict convention', () => {
  it('ends the policy with the answer instruction once, and asks for a verdict-shaped response', () => {
    expect(guardHeader('Unsafe: weapons.').instructions).toBe(`Unsafe: weapons.\n\n${GUARD_ANSWER_INSTRUCTION}`);
    expect(guardHeader(`Policy. ${GUARD_ANSWER_INSTRUCTION}`).instructions).toBe(`Policy. ${GUARD_ANSWER_INSTRUCTION}`);
    expect(guardHeader('p').responseFormat?.schema).toEqual({ type: 'string', enum: ['safe', 'unsafe'] });
  });

  it('recognizes a rendered guard prompt, and not an agent prompt', () => {
    const profile = getProfile('harmony-o200k');
    const user = { kind: 'message' as const, role: 'user' as const, text: 'hello' };
    expect(isGuardPrompt(profile.parsePrompt(profile.render(guardHeader('Unsafe: weapons.'), [user])))).toBe(true);
    expect(
      isGuardPrompt(profile.parsePrompt(profile.render({ instructions: 'Answer safely.', tools: [] }, [user]))),
    ).toBe(false);
  });

  it.each([
    ['safe', 'safe'],
    ['"unsafe"', 'unsafe'],
    [' Unsafe.', 'unsafe'],
    ['<|channel|>final<|message|>safe', 'safe'],
    ['<|channel|>analysis<|message|>unsafe? no<|end|><|start|>assistant<|channel|>final<|message|>safe', 'safe'],
    ['unsafe content', undefined],
    ['Once upon a time', undefined],
    ['', undefined],
  ])('reads %j as %s', (answer, verdict) => {
    expect(readGuardVerdict(answer)).toBe(verdict);
  });
});
