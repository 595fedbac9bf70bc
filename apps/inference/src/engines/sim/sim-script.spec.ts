import { getProfile, type ConversationEntry, type RenderHeader, type ToolSpec } from '@fastloop/model-profiles';
import { schemaProblems } from '@fastloop/test-kit';
import { simulateCompletion } from './sim-engine';
import { answerText, scriptCompletion } from './sim-script';
import { asksForHandoff } from './sim-handoff';
import { completionToEntry, toolOutputFor } from '../../testing/completion-entry';

const profile = getProfile('harmony-o200k');
const tools: ToolSpec[] = [
  {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
      required: ['city'],
    },
  },
  {
    name: 'search',
    namespace: 'browser',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string' },
        limit: { type: 'number' },
        opts: { type: 'object', properties: { deep: { type: 'boolean' } }, required: ['deep'] },
      },
      required: ['query', 'opts'],
    },
  },
  {
    name: 'list_files',
    parameters: {
      type: 'object',
      properties: { paths: { type: 'array', items: { type: 'string' } } },
      required: ['paths'],
    },
  },
];
const script = { toolCalls: 2, answerWords: 40 };
const withTools: RenderHeader = { instructions: 'Help the user.', tools };
const user = (text: string): ConversationEntry => ({ kind: 'message', role: 'user', text });

/** Runs the simulated model on a conversation and reads its completion back as an entry. */
function step(
  header: RenderHeader,
  entries: ConversationEntry[],
  options = script,
): { tokens: number[]; entry: ConversationEntry } {
  const tokens = simulateCompletion(profile, profile.render(header, entries), options);
  return { tokens, entry: completionToEntry(profile, tokens, `call_${entries.length}`, header.tools) };
}

describe('the simulated model', () => {
  it('calls one of the offered tools after a user message, with arguments that validate against its schema', () => {
    const { tokens, entry } = step(withTools, [user('What is the weather in Paris?')]);
    expect(tokens[tokens.length - 1]).toBe(profile.stopTokens.find((t) => profile.decode([t]) === '<|call|>'));
    expect(entry.kind).toBe('function_call');
    if (entry.kind !== 'function_call') return;
    const parsedTools = profile.parsePrompt(profile.render(withTools, [])).tools;
    const tool = parsedTools.find((t) => t.name === entry.name && t.namespace === (entry.namespace ?? 'functions'))!;
    expect(tool).toBeDefined();
    expect(schemaProblems(tool.parameters, JSON.parse(entry.arguments))).toEqual([]);
  });

  it('validates its arguments for every tool it picks, across many user messages', () => {
    const parsedTools = profile.parsePrompt(profile.render(withTools, [])).tools;
    const picked = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const { entry } = step(withTools, [user(`request number ${i} about files and weather`)]);
      if (entry.kind !== 'function_call') throw new Error('expected a function call');
      picked.add(entry.name);
      const tool = parsedTools.find((t) => t.name === entry.name)!;
      expect(schemaProblems(tool.parameters, JSON.parse(entry.arguments))).toEqual([]);
    }
    expect(picked.size).toBe(tools.length); // the hash spreads requests over all tools
  });

  it('is deterministic: the same conversation yields the same tokens', () => {
    const a = step(withTools, [user('Plan a trip')]).tokens;
    expect(step(withTools, [user('Plan a trip')]).tokens).toEqual(a);
  });

  it('calls another tool after a tool output, then answers once SIM_TOOL_CALLS calls were made', () => {
    const entries: ConversationEntry[] = [user('Compare the weather in Oslo and Rome')];
    const calls: string[] = [];
    for (;;) {
      const { entry } = step(withTools, entries);
      entries.push(entry);
      if (entry.kind !== 'function_call') break;
      calls.push(entry.namespace ? `${entry.namespace}.${entry.name}` : entry.name);
      entries.push(toolOutputFor(entry, '{"ok":true}'));
    }
    expect(calls).toHaveLength(2);
    expect(new Set(calls).size).toBe(2); // "another" tool
    const answer = entries[entries.length - 1];
    expect(answer).toMatchObject({ kind: 'message', role: 'assistant' });
    if (answer.kind !== 'message') return;
    expect(answer.text.split(' ')).toHaveLength(40);
    for (const c of calls) expect(answer.text).toContain(c);
  });

  it('starts counting tool calls again after the next user message', () => {
    const entries: ConversationEntry[] = [
      user('first'),
      { kind: 'message', role: 'assistant', text: 'done' },
      user('second'),
    ];
    expect(step(withTools, entries).entry.kind).toBe('function_call');
  });

  it('answers directly when SIM_TOOL_CALLS is 0', () => {
    expect(step(withTools, [user('hi')], { toolCalls: 0, answerWords: 5 }).entry).toMatchObject({ kind: 'message' });
  });

  it('answers the user in SIM_ANSWER_WORDS words when no tools are offered, ending with <|return|>', () => {
    const { tokens, entry } = step({ tools: [] }, [user('Tell me about sparrows')], { toolCalls: 2, answerWords: 12 });
    expect(profile.decode(tokens.slice(-1))).toBe('<|return|>');
    if (entry.kind !== 'message') throw new Error('expected a message');
    expect(entry.text.split(' ')).toHaveLength(12);
    expect(entry.text).toContain('sparrows');
  });

  it('calls a freeform apply_patch tool with a well-formed patch as plain text, then answers after its output', () => {
    const header: RenderHeader = {
      tools: [{ name: 'apply_patch', description: 'Edit files.', freeform: { type: 'text' } }],
    };
    const entries: ConversationEntry[] = [user('Create a greeting file')];
    const first = step(header, entries, { toolCalls: 1, answerWords: 5 });
    expect(first.entry).toMatchObject({ kind: 'custom_tool_call', name: 'apply_patch' });
    if (first.entry.kind !== 'custom_tool_call') return;
    expect(first.entry.input).toMatch(
      /^\*\*\* Begin Patch\n\*\*\* Add File: sim-[0-9a-f]{8}\.txt\n\+Create a greeting file[\w ]*\n\*\*\* End Patch\n$/,
    );
    entries.push(first.entry, toolOutputFor(first.entry, 'Success. Updated the following files:\nA sim.txt'));
    expect(step(header, entries, { toolCalls: 1, answerWords: 5 }).entry).toMatchObject({
      kind: 'message',
      role: 'assistant',
    });
  });

  it('calls any other freeform tool with a line of plain text, not JSON', () => {
    const header: RenderHeader = {
      tools: [{ name: 'note', namespace: 'pad', freeform: { type: 'grammar', syntax: 'regex', definition: '.+' } }],
    };
    const { entry } = step(header, [user('remember the milk')]);
    expect(entry).toMatchObject({ kind: 'custom_tool_call', name: 'note', namespace: 'pad' });
    if (entry.kind === 'custom_tool_call') expect(entry.input.startsWith('remember the milk ')).toBe(true);
  });

  it('still answers a prompt it cannot parse', () => {
    const tokens = simulateCompletion(profile, profile.encodeText('not a chat prompt at all'), script);
    expect(completionToEntry(profile, tokens, 'x')).toMatchObject({ kind: 'message' });
  });
});

describe('scriptCompletion', () => {
  it('treats authors like functions.x and ns.x as tool outputs', () => {
    const parsed = {
      messages: [
        { author: 'user', content: 'go' },
        { author: 'assistant', channel: 'commentary', recipient: 'ns.tool', content: '{}' },
        { author: 'ns.tool', content: 'result' },
      ],
      tools: [{ namespace: 'ns', name: 'tool', parameters: { type: 'object' as const, properties: {} } }],
      endsWithGenerationPrompt: true,
    };
    expect(scriptCompletion(parsed, { toolCalls: 2, answerWords: 5 })).toMatchObject({
      kind: 'function_call',
      namespace: 'ns',
      name: 'tool',
    });
    expect(scriptCompletion(parsed, { toolCalls: 1, answerWords: 5 })).toMatchObject({ kind: 'message' });
  });
});

describe('answerText', () => {
  it('has exactly the requested number of words', () => {
    for (const n of [1, 3, 10, 40, 200])
      expect(answerText({ userText: 'a b c', called: ['x', 'y', 'z'] }, n).split(' ')).toHaveLength(n);
  });
});

describe('the simulated model given explicit instructions', () => {
  const exec: ToolSpec = {
    name: 'exec_command',
    parameters: {
      type: 'object',
      properties: {
        cmd: { type: 'string' },
        workdir: { type: 'string' },
        shell: { type: 'string' },
        yield_time_ms: { type: 'number' },
      },
      required: ['cmd'],
    },
  };
  const header: RenderHeader = { tools: [...tools, exec] };

  it('runs each quoted command with the tool the user names, filling only required properties, then answers', () => {
    const entries: ConversationEntry[] = [
      user('Run `printf hi > a.txt` then `git add a.txt` with exec_command, please.'),
    ];
    const calls: unknown[] = [];
    for (;;) {
      const { entry } = step(header, entries);
      entries.push(entry);
      if (entry.kind !== 'function_call') break;
      expect(entry.name).toBe('exec_command');
      calls.push(JSON.parse(entry.arguments));
      entries.push(toolOutputFor(entry, 'ok'));
    }
    expect(calls).toEqual([{ cmd: 'printf hi > a.txt' }, { cmd: 'git add a.txt' }]);
    expect(entries[entries.length - 1]).toMatchObject({ kind: 'message', role: 'assistant' });
  });

  it('makes at most SIM_TOOL_CALLS instructed calls', () => {
    const { entry } = step(header, [user('Use exec_command: `ls` `pwd` `id`')], { toolCalls: 0, answerWords: 3 });
    expect(entry.kind).toBe('message');
  });

  it('ignores quoted text when no offered tool is named, and a named tool without quoted text', () => {
    const plain = step(header, [user('Weather for `Oslo`?')]).entry;
    const named = step(header, [user('Weather via exec_command?')]).entry;
    const baseline = (text: string) => step({ tools }, [user(text)]).entry;
    expect(plain.kind).toBe('function_call');
    expect(named.kind).toBe('function_call');
    if (plain.kind === 'function_call') expect(JSON.parse(plain.arguments)).not.toEqual({ cmd: 'Oslo' });
    expect(baseline('Weather for `Oslo`?').kind).toBe('function_call');
  });

  it('sends a fenced block to a custom (freeform) tool as its input, and each span to the tool named after it', () => {
    const patch: ToolSpec = {
      name: 'apply_patch',
      freeform: { type: 'text' },
      parameters: { type: 'object', properties: {} },
    };
    const mixed: RenderHeader = { tools: [exec, patch] };
    const text =
      'Apply\n```\n*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n```\nwith apply_patch, then run `git add a.txt` with exec_command.';
    const entries: ConversationEntry[] = [user(text)];
    const calls: ConversationEntry[] = [];
    for (;;) {
      const { entry } = step(mixed, entries);
      entries.push(entry);
      if (entry.kind !== 'function_call' && entry.kind !== 'custom_tool_call') break;
      calls.push(entry);
      entries.push(toolOutputFor(entry, 'ok'));
    }
    expect(
      calls.map((c) =>
        c.kind === 'custom_tool_call'
          ? [c.name, c.input]
          : c.kind === 'function_call'
            ? [c.name, JSON.parse(c.arguments)]
            : [],
      ),
    ).toEqual([
      ['apply_patch', '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n'],
      ['exec_command', { cmd: 'git add a.txt' }],
    ]);
  });
});

describe('the simulated model asked for a handoff summary (compaction)', () => {
  const exec: ToolSpec = {
    name: 'exec_command',
    parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
  };
  const task = 'Run `seq 1 3` then `seq 4 6` then `seq 7 9` with exec_command.';
  // fastloop's own summary request, and Codex's local compaction prompt (its first line).
  const requests = [
    'Compact this conversation so the work can continue in a fresh context: write a handoff summary of the next steps.',
    'You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.',
  ];

  /** Follows `entries` with the tools offered until the model answers; returns the calls' arguments. */
  function work(entries: ConversationEntry[], limit: number): unknown[] {
    const calls: unknown[] = [];
    for (let i = 0; i < limit; i++) {
      const { entry } = step({ tools: [exec] }, entries, { toolCalls: 4, answerWords: 40 });
      entries.push(entry);
      if (entry.kind !== 'function_call') break;
      calls.push(JSON.parse(entry.arguments));
      entries.push(toolOutputFor(entry, 'ok'));
    }
    return calls;
  }

  it.each(requests)('writes one derived from the conversation, which the model then continues from: %s', (ask) => {
    const entries = [user(task)];
    expect(work(entries, 2)).toEqual([{ cmd: 'seq 1 3' }, { cmd: 'seq 4 6' }]);
    // The summary turn hides the tools (tool_choice "none"), as fastloop's does.
    const summary = step({ tools: [] }, [...entries, user(ask)]).entry;
    expect(summary).toEqual({
      kind: 'message',
      role: 'assistant',
      text: [
        'The user asked: Run "seq 1 3" then "seq 4 6" then "seq 7 9" with exec_command.',
        'Done so far: exec_command "seq 1 3"; exec_command "seq 4 6".',
        'Next steps: run `seq 7 9` with exec_command.',
      ].join('\n'),
    });
    if (summary.kind !== 'message') return;
    // In a fresh context whose last user message is the summary, the work goes on where it stopped.
    // (fastloop reads a compaction item back with this prefix; a client's local compaction has its own).
    const readBack = `Summary of the conversation so far, written when its context was compacted:\n${summary.text}`;
    const fresh = [user(task), user(readBack)];
    expect(work(fresh, 5)).toEqual([{ cmd: 'seq 7 9' }]);
    expect(fresh[fresh.length - 1]).toMatchObject({ kind: 'message', role: 'assistant' });
  });

  it('says nothing is left when every step is done, and summarises a summary into the same next steps', () => {
    const entries = [user(task)];
    work(entries, 4);
    const text = (e: ConversationEntry) => (e.kind === 'message' ? e.text : '');
    const finished = text(step({ tools: [] }, [...entries.slice(0, 7), user(requests[0])]).entry);
    expect(finished.split('\n').slice(1)).toEqual([
      'Done so far: exec_command "seq 1 3"; exec_command "seq 4 6"; exec_command "seq 7 9".',
      'Next steps: none; answer the user.',
    ]);
    const first = text(step({ tools: [] }, [...entries.slice(0, 3), user(requests[0])]).entry);
    // A client that leaves the tools offered on its summary turn (the summary names them either way).
    const again = text(step({ tools: [exec] }, [user(first), user(requests[1])]).entry);
    expect(again.split('\n').slice(-2)).toEqual([
      'Done so far: nothing yet.',
      'Next steps: run `seq 4 6` with exec_command, then run `seq 7 9` with exec_command.',
    ]);
  });

  it('answers an ordinary request to summarise as usual', () => {
    const { entry } = step({ tools: [] }, [user(task), user('Now summarise what you found.')]);
    expect(entry).toMatchObject({ kind: 'message', text: expect.stringMatching(/^Simulated answer to Now summarise/) });
  });
});

describe('asksForHandoff', () => {
  it('tells a request to write a handoff summary from a summary read back and from ordinary questions', () => {
    expect(asksForHandoff('Compact this conversation: write a handoff summary of the goals.')).toBe(true);
    expect(asksForHandoff('CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM.')).toBe(true);
    expect(asksForHandoff('Summary of the conversation so far, written when its context was compacted:\nx')).toBe(
      false,
    );
    expect(asksForHandoff('Now summarise what you found.')).toBe(false);
    expect(asksForHandoff('Write a summary of the weather.')).toBe(false);
  });
});
