import { getProfile, guardHeader, readGuardVerdict, type ConversationEntry } from '@fastloop/model-profiles';
import { simulateCompletion } from './sim-engine';
import { guardCompletion } from './sim-guard';

const profile = getProfile('harmony-o200k');
const script = { toolCalls: 2, answerWords: 12 };
const guard = { blockTerms: ['Project Falcon', 'launch codes'] };
const user = (text: string): ConversationEntry => ({ kind: 'message', role: 'user', text });
const answer = (text: string): ConversationEntry => ({ kind: 'message', role: 'assistant', text });

/** What the simulated model answers to `entries` under the guard header, read as a verdict word. */
function verdictFor(entries: ConversationEntry[], policy = 'Unsafe: anything confidential.'): string | undefined {
  const tokens = simulateCompletion(profile, profile.render(guardHeader(policy), entries), script, { guard });
  return readGuardVerdict(profile.decode(tokens.filter((t) => !profile.stopTokens.includes(t))));
}

describe('the simulated engine playing a guard', () => {
  it('answers unsafe when the new messages contain a block term, in any case', () => {
    expect(verdictFor([user('[input] hello'), user('[tool] the PROJECT FALCON roadmap')])).toBe('unsafe');
    expect(verdictFor([user('[input] where are the launch codes?')])).toBe('unsafe');
  });

  it('answers safe when they do not', () => {
    expect(verdictFor([user('[input] how do I list files?'), user('[tool] a.ts b.ts')])).toBe('safe');
  });

  it('judges only what came after its last verdict', () => {
    const earlier = [user('[input] project falcon'), answer('unsafe')];
    expect(verdictFor([...earlier, user('[input] list files')])).toBe('safe');
    expect(verdictFor([...earlier, user('[input] falcon? no: launch codes')])).toBe('unsafe');
  });

  it('recognizes a guard prompt whatever the policy, and answers a verdict with no terms configured', () => {
    const tokens = simulateCompletion(
      profile,
      profile.render(guardHeader('Any policy text.'), [user('project falcon')]),
      script,
    );
    expect(readGuardVerdict(profile.decode(tokens.filter((t) => !profile.stopTokens.includes(t))))).toBe('safe');
  });

  it('leaves every other prompt to the agent script', () => {
    const parsed = profile.parsePrompt(
      profile.render({ instructions: 'You are a coding agent. Be safe.', tools: [] }, [user('project falcon')]),
    );
    expect(guardCompletion(parsed, guard)).toBeUndefined();
    const tokens = simulateCompletion(profile, profile.render({ tools: [] }, [user('project falcon')]), script, {
      guard,
    });
    expect(profile.decode(tokens)).toContain('Simulated answer');
  });
});
