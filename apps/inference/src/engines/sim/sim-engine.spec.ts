import { getProfile, type ConversationEntry, type RenderHeader } from '@fastloop/model-profiles';
import { assemblePrompt, sessionSequence } from '../../prompt-assembly';
import { completionToEntry, toolOutputFor } from '../../testing/completion-entry';
import { SimEngine } from './sim-engine';

const profile = getProfile('harmony-o200k');
const pace = { ttftMs: 0, prefillTokensPerSecond: 1e9, tokensPerSecond: 1e6, jitter: 0 };
const header: RenderHeader = {
  instructions: 'You are a coding agent.',
  tools: [
    { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
    {
      name: 'grep',
      parameters: { type: 'object', properties: { pattern: { type: 'string' } }, required: ['pattern'] },
    },
  ],
};

describe('SimEngine.complete', () => {
  it('samples the same completion when it reads only a session log’s new tokens as when it parses the whole prompt', () => {
    const engine = new SimEngine({ profile, pace, script: { toolCalls: 6, answerWords: 12 } });
    const entries: ConversationEntry[] = [{ kind: 'message', role: 'user', text: 'Find the bug in the cache.' }];
    let held: ReturnType<typeof sessionSequence> | undefined;
    for (let turn = 1; turn <= 8; turn++) {
      const full = profile.render(header, entries);
      // As the worker does: the session's log is extended in place by the prompt's new tokens.
      const prefixLen = held?.tokens.length ?? 0;
      const assembled = assemblePrompt(held, prefixLen, full.slice(prefixLen));
      expect(Array.from(assembled.prompt)).toEqual(full);
      const incremental = engine.complete(assembled.prompt, assembled.log);
      expect(incremental).toEqual(engine.complete(full));
      held = sessionSequence(assembled, incremental);
      const entry = completionToEntry(profile, incremental, `call_${turn}`);
      entries.push(entry);
      if (entry.kind !== 'function_call') break;
      entries.push(toolOutputFor(entry, `output of turn ${turn}\n`.repeat(20)));
    }
    expect(entries[entries.length - 1]).toMatchObject({ kind: 'message', role: 'assistant' });
  });
});
