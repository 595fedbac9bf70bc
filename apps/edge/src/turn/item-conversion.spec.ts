import { getProfile } from '@fastloop/model-profiles';
import { safetyV1 } from '@fastloop/proto';
import { validateItems } from '@fastloop/protocol';
import type { CallTarget } from './conversation-state';
import { itemsToEntries, itemsToScans } from './item-conversion';

const profile = getProfile('harmony-o200k');
const entriesOf = (items: unknown[]) => itemsToEntries(validateItems(items), new Map<string, CallTarget>());

/** What the model reads of the last item (rendered after the others, which set up its call). */
function renderedLast(items: unknown[]): string {
  const entries = entriesOf(items);
  const lastItemRendered = entries.length > 0 && entriesOf(items.slice(0, -1)).length < entries.length;
  return lastItemRendered ? profile.decode(profile.renderEntry(entries[entries.length - 1])) : '';
}

/** What safety scans of the last item. */
function scannedLast(items: unknown[]) {
  const scans = itemsToScans(validateItems(items));
  return scans[scans.length - 1];
}

/** How the safety service read an item's author from its type before the edge stated it (the oracle). */
function guessedSource(itemType: string, role: string): safetyV1.ItemSource {
  const { ITEM_SOURCE_INPUT, ITEM_SOURCE_TOOL, ITEM_SOURCE_MODEL } = safetyV1.ItemSource;
  if (itemType.endsWith('_output') || itemType.endsWith('_result')) return ITEM_SOURCE_TOOL;
  if (itemType === 'message') return role === 'assistant' ? ITEM_SOURCE_MODEL : ITEM_SOURCE_INPUT;
  if (itemType === 'reasoning' || itemType.endsWith('_call')) return ITEM_SOURCE_MODEL;
  return ITEM_SOURCE_INPUT;
}

const call = { type: 'function_call', call_id: 'call_1', name: 'exec', arguments: '{"cmd":"ls"}' };
const customCall = { type: 'custom_tool_call', call_id: 'call_2', name: 'apply_patch', input: '*** Begin Patch' };

// One row per item type: the items (the last is the one under test), its rendering, its scan text.
const cases: [string, unknown[], string, string][] = [
  ['a user message with a string', [{ role: 'user', content: 'hi' }], '<|start|>user<|message|>hi<|end|>', 'hi'],
  [
    'a system message',
    [{ type: 'message', role: 'system', content: 'be kind' }],
    '<|start|>system<|message|>be kind<|end|>',
    'be kind',
  ],
  [
    'a developer message',
    [{ type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'rules' }] }],
    '<|start|>developer<|message|>rules<|end|>',
    'rules',
  ],
  [
    'a user message with text, image and file parts',
    [
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'see' },
          { type: 'input_image', image_url: 'data:,' },
          { type: 'input_file', filename: 'a.pdf', file_data: 'x' },
        ],
      },
    ],
    '<|start|>user<|message|>see\n[image]\n[file: a.pdf]<|end|>',
    'see\n[image]\n[file: a.pdf]',
  ],
  [
    'an assistant message with output_text and refusal parts',
    [
      {
        type: 'message',
        role: 'assistant',
        content: [
          { type: 'output_text', text: 'ok', annotations: [] },
          { type: 'refusal', refusal: 'I cannot' },
        ],
      },
    ],
    '<|start|>assistant<|channel|>final<|message|>ok\nI cannot<|end|>',
    'ok\nI cannot',
  ],
  [
    'a message part of a type without a rendering, as a placeholder',
    [{ role: 'user', content: [{ type: 'input_audio', data: 'x' }] }],
    '<|start|>user<|message|>[input_audio]<|end|>',
    '[input_audio]',
  ],
  [
    'reasoning with content',
    [
      {
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 's' }],
        content: [{ type: 'reasoning_text', text: 'think' }],
      },
    ],
    '<|start|>assistant<|channel|>analysis<|message|>think<|end|>',
    'think',
  ],
  [
    'reasoning with only a summary',
    [{ type: 'reasoning', summary: [{ type: 'summary_text', text: 'short' }] }],
    '<|start|>assistant<|channel|>analysis<|message|>short<|end|>',
    'short',
  ],
  [
    'a function call',
    [call],
    '<|start|>assistant<|channel|>commentary to=functions.exec <|constrain|>json<|message|>{"cmd":"ls"}<|call|>',
    'exec\n{"cmd":"ls"}',
  ],
  [
    'a namespaced function call',
    [{ ...call, namespace: 'shell' }],
    '<|start|>assistant<|channel|>commentary to=shell.exec <|constrain|>json<|message|>{"cmd":"ls"}<|call|>',
    'shell\nexec\n{"cmd":"ls"}',
  ],
  [
    'a function call output',
    [call, { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' }],
    '<|start|>functions.exec to=assistant<|channel|>commentary<|message|>a.txt<|end|>',
    'a.txt',
  ],
  [
    'a function call output with parts',
    [
      call,
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: [
          { type: 'input_text', text: 'a' },
          { type: 'input_image', file_id: 'f' },
        ],
      },
    ],
    '<|start|>functions.exec to=assistant<|channel|>commentary<|message|>a\n[image]<|end|>',
    'a\n[image]',
  ],
  [
    'a function call output that names its tool instead of a call_id',
    [{ type: 'function_call_output', name: 'exec', namespace: 'shell', output: 'ok' }],
    '<|start|>shell.exec to=assistant<|channel|>commentary<|message|>ok<|end|>',
    'shell\nexec\nok',
  ],
  [
    'a custom tool call',
    [customCall],
    '<|start|>assistant<|channel|>commentary to=functions.apply_patch<|message|>*** Begin Patch<|call|>',
    'apply_patch\n*** Begin Patch',
  ],
  [
    'a custom tool call output',
    [customCall, { type: 'custom_tool_call_output', call_id: 'call_2', output: 'Done!' }],
    '<|start|>functions.apply_patch to=assistant<|channel|>commentary<|message|>Done!<|end|>',
    'Done!',
  ],
  [
    'a custom tool call output that names its tool instead of a call_id',
    [customCall, { type: 'custom_tool_call_output', name: 'apply_patch', output: 'Done!' }],
    '<|start|>functions.apply_patch to=assistant<|channel|>commentary<|message|>Done!<|end|>',
    'apply_patch\nDone!',
  ],
  [
    'a local shell call, as a call to the local_shell tool',
    [
      {
        type: 'local_shell_call',
        id: 'lsh_1',
        call_id: 'call_3',
        status: 'completed',
        action: { type: 'exec', command: ['ls', '-a'], env: {} },
      },
    ],
    '<|start|>assistant<|channel|>commentary to=functions.local_shell <|constrain|>json<|message|>{"command":["ls","-a"],"env":{}}<|call|>',
    'local_shell\n{"command":["ls","-a"],"env":{}}',
  ],
  [
    'a local shell call output',
    [{ type: 'local_shell_call_output', id: 'call_3', output: 'a.txt' }],
    '<|start|>functions.local_shell to=assistant<|channel|>commentary<|message|>a.txt<|end|>',
    'a.txt',
  ],
  [
    'a web search call, carried and scanned, not rendered',
    [{ type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'weather' } }],
    '',
    'completed\nsearch\nweather',
  ],
  [
    'an MCP call, carried and scanned, not rendered',
    [{ type: 'mcp_call', id: 'mc_1', server_label: 'srv', name: 't', arguments: '{"q":1}', output: 'res' }],
    '',
    'srv\nt\n{"q":1}\nres',
  ],
  [
    'a file search call, carried and scanned, not rendered',
    [{ type: 'file_search_call', id: 'fs_1', status: 'completed', queries: ['q1', 'q2'], results: null }],
    '',
    'completed\nq1\nq2',
  ],
  [
    'an image generation call, carried and scanned, not rendered',
    [{ type: 'image_generation_call', id: 'ig_1', status: 'completed', result: 'aGk=' }],
    '',
    'completed\naGk=',
  ],
  [
    'a code interpreter call, carried and scanned, not rendered',
    [
      {
        type: 'code_interpreter_call',
        id: 'ci_1',
        status: 'completed',
        code: 'print(1)',
        container_id: 'c',
        outputs: null,
      },
    ],
    '',
    'completed\nprint(1)\nc',
  ],
  [
    'an MCP tool list, carried and scanned, not rendered',
    [
      {
        type: 'mcp_list_tools',
        id: 'ml_1',
        server_label: 'srv',
        tools: [{ name: 't', input_schema: {}, description: 'd' }],
      },
    ],
    '',
    'srv\nt\nd',
  ],
  [
    'an MCP approval request, carried and scanned, not rendered',
    [{ type: 'mcp_approval_request', id: 'mr_1', server_label: 'srv', name: 't', arguments: '{}' }],
    '',
    'srv\nt\n{}',
  ],
  [
    'an MCP approval response, carried and scanned, not rendered',
    [{ type: 'mcp_approval_response', approval_request_id: 'mr_1', approve: true, reason: 'ok' }],
    '',
    'mr_1\nok',
  ],
  [
    'a computer call, carried and scanned, not rendered',
    [
      {
        type: 'computer_call',
        id: 'cu_1',
        call_id: 'c',
        status: 'completed',
        pending_safety_checks: [],
        action: { type: 'type', text: 'hello' },
      },
    ],
    '',
    'c\ncompleted\ntype\nhello',
  ],
  [
    'an item of a type newer than this code, carried and scanned, not rendered',
    [{ type: 'hologram_call', id: 'h_1', payload: { nested: ['deep text'] } }],
    '',
    'deep text',
  ],
  [
    'a computer call output, carried and scanned, not rendered',
    [{ type: 'computer_call_output', call_id: 'c', output: { type: 'computer_screenshot', image_url: 'u' } }],
    '',
    'c\ncomputer_screenshot\nu',
  ],
];

describe('item conversion', () => {
  it.each(cases)('renders and scans %s', (_, items, rendered, scanned) => {
    expect(renderedLast(items)).toBe(rendered);
    const last = items[items.length - 1] as { type?: string };
    const scan = scannedLast(items);
    expect(scan).toEqual({
      itemType: last.type ?? 'message',
      role: last.type === undefined || last.type === 'message' ? expect.any(String) : '',
      text: scanned,
      source: expect.any(Number),
    });
    // The source the edge states is the author the safety service guessed from the type before.
    expect(scan.source).toBe(guessedSource(scan.itemType, scan.role));
  });

  it('scans every byte of every rendered entry (no rendered text escapes the scan)', () => {
    const items = validateItems(cases.flatMap(([, i]) => i));
    const scanned = itemsToScans(items)
      .map((s) => s.text)
      .join('\n');
    const calls = new Map<string, CallTarget>();
    for (const entry of itemsToEntries(items, calls)) {
      const texts =
        entry.kind === 'message' || entry.kind === 'reasoning'
          ? [entry.text]
          : entry.kind === 'function_call'
            ? [entry.name, entry.arguments]
            : entry.kind === 'custom_tool_call'
              ? [entry.name, entry.input]
              : [entry.output];
      for (const text of texts) expect(scanned).toContain(text);
    }
  });

  it('pairs a function_call_output without call_id (as Codex CLI sends it) with the latest call of that tool', () => {
    const entries = entriesOf([
      { type: 'function_call', call_id: 'call_a', name: 'exec', namespace: 'shell', arguments: '{}' },
      { type: 'function_call', call_id: 'call_b', name: 'exec', namespace: 'shell', arguments: '{"x":1}' },
      { type: 'function_call_output', name: 'exec', namespace: 'shell', output: 'done' },
    ]);
    expect(entries[2]).toEqual({
      kind: 'function_call_output',
      name: 'exec',
      namespace: 'shell',
      output: 'done',
      callId: 'call_b',
    });
  });

  it('renders a call_id-less output as the output of the tool it names when no call of it is in the conversation', () => {
    expect(entriesOf([{ type: 'function_call_output', name: 'exec', output: 'ok' }])).toEqual([
      { kind: 'function_call_output', name: 'exec', output: 'ok', callId: '' },
    ]);
  });

  it('rejects an output with neither call_id nor name as a missing call_id', () => {
    expect(() => entriesOf([{ type: 'function_call_output', output: 'ok' }])).toThrow(
      expect.objectContaining({ code: 'missing_required_parameter', param: 'input[0].call_id' }),
    );
  });

  it('rejects a function or custom tool output whose call_id answers no call', () => {
    expect(() => entriesOf([{ type: 'function_call_output', call_id: 'call_x', output: 'ok' }])).toThrow(
      expect.objectContaining({ param: 'input[0]' }),
    );
    expect(() => entriesOf([call, { type: 'custom_tool_call_output', call_id: 'call_1x', output: 'ok' }])).toThrow(
      expect.objectContaining({
        message: 'No tool call found for custom tool call output with call_id call_1x.',
        param: 'input[1]',
      }),
    );
  });

  it.each([
    ['a user message', [{ role: 'user', content: 'a SECRET b' }]],
    ['reasoning', [{ type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'think SECRET' }] }]],
    ['a namespaced function call', [{ ...call, namespace: 'shell', arguments: '{"k":"SECRET"}' }]],
    [
      'a function call output that names its tool',
      [{ type: 'function_call_output', name: 'exec', namespace: 'shell', output: 'got SECRET' }],
    ],
    ['a custom tool call', [{ ...customCall, input: '+SECRET' }]],
    [
      'a custom tool call output',
      [customCall, { type: 'custom_tool_call_output', call_id: 'call_2', output: 'key SECRET' }],
    ],
    [
      'a local shell call',
      [
        {
          type: 'local_shell_call',
          id: 'lsh_1',
          call_id: 'call_3',
          status: 'completed',
          action: { type: 'exec', command: ['echo', 'SECRET'], env: {} },
        },
      ],
    ],
    ['a local shell call output', [{ type: 'local_shell_call_output', id: 'call_3', output: 'SECRET' }]],
  ])('masks a redaction span of the scan text at the same text in the entry of %s', (_, raw) => {
    const items = validateItems(raw);
    const last = items.length - 1;
    const text = itemsToScans(items)[last].text;
    const start = text.indexOf('SECRET');
    const masks = new Map([[last, [{ start, end: start + 'SECRET'.length, ruleId: 'r' }]]]);
    const masked = itemsToEntries(items, new Map<string, CallTarget>(), 0, { masks });
    const plain = itemsToEntries(items, new Map<string, CallTarget>());
    const rendered = profile.decode(profile.renderEntry(masked[masked.length - 1]));
    expect(rendered).not.toContain('SECRET');
    expect(rendered).toBe(
      profile.decode(profile.renderEntry(plain[plain.length - 1])).replace('SECRET', '[redacted r]'),
    );
  });

  it('never masks a tool name: a span over the name and the text masks only the text', () => {
    const items = validateItems([
      { type: 'function_call_output', name: 'exec', namespace: 'shell', output: 'secret here' },
    ]);
    expect(itemsToScans(items)[0].text).toBe('shell\nexec\nsecret here');
    const [entry] = itemsToEntries(items, new Map<string, CallTarget>(), 0, {
      masks: new Map([[0, [{ start: 2, end: 17, ruleId: 'r' }]]]),
    });
    expect(entry).toMatchObject({ name: 'exec', namespace: 'shell', output: '[redacted r] here' });
  });
});
