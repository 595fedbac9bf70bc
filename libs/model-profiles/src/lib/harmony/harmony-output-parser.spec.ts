import fc from 'fast-check';
import type { ConversationEntry, OutputParser, ParseEvent, ToolSpec } from '../model-profile';
import { getProfile } from '../profile-registry';
import {
  anyText,
  assistantEntry,
  chunk,
  isWellFormedText,
  namespaceName,
  toolName,
} from '../testing/conversation-arbitraries';
import { MAX_HEADER_TOKENS } from './harmony-output-parser';
import { HarmonyToken as T } from './harmony-tokens';

const profile = getProfile('harmony-o200k');
const enc = (text: string) => profile.encodeText(text);

interface Item {
  item: Extract<ParseEvent, { type: 'item_start' }>['item'];
  text: string;
  stop?: string;
}

/** Feeds `tokens` in the given chunk sizes, then finishes; checks the event grammar on the way. */
function parse(
  tokens: readonly number[],
  sizes: readonly number[] = [tokens.length],
  tools: readonly ToolSpec[] = [],
): Item[] {
  const parser: OutputParser = profile.createOutputParser(tools);
  const events = chunk(tokens, sizes).flatMap((c) => parser.push(c));
  events.push(...parser.finish());
  const items: Item[] = [];
  let open: Item | undefined;
  for (const event of events) {
    if (event.type === 'item_start') {
      expect(open).toBeUndefined();
      open = { item: event.item, text: '' };
      items.push(open);
    } else if (event.type === 'delta') {
      expect(open).toBeDefined();
      expect(isWellFormedText(event.text)).toBe(true);
      open!.text += event.text;
    } else {
      expect(open).toBeDefined();
      open!.stop = event.stop;
      open = undefined;
    }
  }
  expect(open).toBeUndefined();
  return items;
}

/** The item a parser should report for an entry the model sampled. */
function expectedItem(entry: ConversationEntry, stop: string): Item {
  switch (entry.kind) {
    case 'message':
      return { item: { kind: 'message' }, text: entry.text, stop };
    case 'reasoning':
      return { item: { kind: 'reasoning' }, text: entry.text, stop };
    case 'function_call':
      return {
        item:
          entry.namespace === undefined
            ? { kind: 'function_call', name: entry.name }
            : { kind: 'function_call', name: entry.name, namespace: entry.namespace },
        text: entry.arguments,
        stop,
      };
    case 'custom_tool_call':
      return {
        item:
          entry.namespace === undefined
            ? { kind: 'custom_tool_call', name: entry.name }
            : { kind: 'custom_tool_call', name: entry.name, namespace: entry.namespace },
        text: entry.input,
        stop,
      };
    default:
      throw new Error('not sampled by the model');
  }
}

const stopOf = (entry: ConversationEntry) =>
  entry.kind === 'function_call' || entry.kind === 'custom_tool_call'
    ? 'call'
    : entry.kind === 'reasoning'
      ? 'end'
      : 'return';
/** The freeform tool a sampled custom tool call needs to have been offered, to parse as one. */
const toolsFor = (entries: readonly ConversationEntry[]): ToolSpec[] =>
  entries.flatMap((e) =>
    e.kind === 'custom_tool_call'
      ? [{ name: e.name, namespace: e.namespace, freeform: { type: 'text' as const } }]
      : [],
  );
const chunkSizes = () => fc.array(fc.integer({ min: 1, max: 7 }), { maxLength: 200 });

describe('HarmonyOutputParser', () => {
  it('gives back the sampled item whatever the chunk sizes, for any unicode text', () => {
    fc.assert(
      fc.property(assistantEntry(), chunkSizes(), (entry, sizes) => {
        expect(parse(profile.renderCompletion(entry), sizes, toolsFor([entry]))).toEqual([
          expectedItem(entry, stopOf(entry)),
        ]);
      }),
      { numRuns: 300 },
    );
  });

  it('gives back reasoning followed by a call or an answer when the model continues after <|end|>', () => {
    const reasoning = anyText().map((text): ConversationEntry => ({ kind: 'reasoning', text }));
    fc.assert(
      fc.property(fc.array(reasoning, { maxLength: 3 }), assistantEntry(), chunkSizes(), (thoughts, last, sizes) => {
        const tokens = [...thoughts, last].flatMap((entry, i) => [
          ...(i === 0 ? [] : profile.renderGenerationPrompt()),
          ...profile.renderCompletion(entry),
        ]);
        const expected = [...thoughts.map((t) => expectedItem(t, 'end')), expectedItem(last, stopOf(last))];
        expect(parse(tokens, sizes, toolsFor([last]))).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });

  it('reads a namespaced recipient as namespace and name, and functions.x as a plain function', () => {
    fc.assert(
      fc.property(toolName(), namespaceName(), (name, namespace) => {
        const call = (ns: string) => [
          T.channel,
          ...enc(`commentary to=${ns}.${name} `),
          T.constrain,
          ...enc('json'),
          T.message,
          ...enc('{}'),
          T.call,
        ];
        expect(parse(call(namespace))[0].item).toEqual({ kind: 'function_call', name, namespace });
        expect(parse(call('functions'))[0].item).toEqual({ kind: 'function_call', name });
      }),
    );
  });

  it('reads a call to an offered freeform tool as a custom tool call and a call to any other tool as a function call', () => {
    const call = (address: string) => [
      T.channel,
      ...enc(`commentary to=${address}`),
      T.message,
      ...enc('*** Begin Patch'),
      T.call,
    ];
    const tools: ToolSpec[] = [
      { name: 'apply_patch', freeform: { type: 'text' } },
      { name: 'exec', namespace: 'shell', freeform: { type: 'text' } },
      { name: 'read' },
    ];
    expect(parse(call('functions.apply_patch'), undefined, tools)).toEqual([
      { item: { kind: 'custom_tool_call', name: 'apply_patch' }, text: '*** Begin Patch', stop: 'call' },
    ]);
    expect(parse(call('shell.exec'), undefined, tools)[0].item).toEqual({
      kind: 'custom_tool_call',
      name: 'exec',
      namespace: 'shell',
    });
    expect(parse(call('functions.read'), undefined, tools)[0].item).toEqual({ kind: 'function_call', name: 'read' });
    expect(parse(call('functions.apply_patch'))[0].item).toEqual({ kind: 'function_call', name: 'apply_patch' });
  });

  it('accepts the recipient before the channel and a bare json content type, as gpt-oss also writes', () => {
    const tokens = [
      ...enc(' to=functions.lookup'),
      T.channel,
      ...enc('commentary json'),
      T.message,
      ...enc('{"a":1}'),
      T.call,
    ];
    expect(parse(tokens)).toEqual([{ item: { kind: 'function_call', name: 'lookup' }, text: '{"a":1}', stop: 'call' }]);
  });

  it('reads a commentary message without recipient as a message (a preamble)', () => {
    const tokens = [T.channel, ...enc('commentary'), T.message, ...enc('Let me check.'), T.end];
    expect(parse(tokens)).toEqual([{ item: { kind: 'message' }, text: 'Let me check.', stop: 'end' }]);
  });

  it('closes an item cut off by the end of the stream with stop eos', () => {
    const tokens = profile
      .renderCompletion({ kind: 'message', role: 'assistant', text: 'partial answer' })
      .slice(0, -1);
    expect(parse(tokens)).toEqual([{ item: { kind: 'message' }, text: 'partial answer', stop: 'eos' }]);
  });

  it('closes an item at <|endoftext|> with stop eos', () => {
    const tokens = [T.channel, ...enc('final'), T.message, ...enc('ok'), T.endOfText];
    expect(parse(tokens)).toEqual([{ item: { kind: 'message' }, text: 'ok', stop: 'eos' }]);
  });

  it('treats text before any channel as message text instead of throwing', () => {
    expect(parse([...enc('Hello there'), T.end])).toEqual([
      { item: { kind: 'message' }, text: 'Hello there', stop: 'end' },
    ]);
    expect(parse(enc('no terminator at all'))).toEqual([
      { item: { kind: 'message' }, text: 'no terminator at all', stop: 'eos' },
    ]);
  });

  it('treats prose followed by <|message|> without a channel as message text, marker included', () => {
    expect(parse([...enc('Sure thing'), T.message, ...enc(' ok'), T.end])).toEqual([
      { item: { kind: 'message' }, text: 'Sure thing<|message|> ok', stop: 'end' },
    ]);
  });

  it('streams a header that never reaches <|message|> as message text once it exceeds the header bound', () => {
    const long = enc(' word'.repeat(MAX_HEADER_TOKENS + 10));
    const parser = profile.createOutputParser();
    const events = parser.push(long);
    expect(events[0]).toEqual({ type: 'item_start', item: { kind: 'message' } });
    expect(events[1]).toMatchObject({ type: 'delta' });
    expect(parse(long)).toEqual([
      { item: { kind: 'message' }, text: ' word'.repeat(MAX_HEADER_TOKENS + 10), stop: 'eos' },
    ]);
  });

  it('reads a message without a channel after the generation prompt as a message', () => {
    expect(parse([T.message, ...enc('hi'), T.return])).toEqual([
      { item: { kind: 'message' }, text: 'hi', stop: 'return' },
    ]);
  });

  it('closes the open item when the model starts a new message without <|end|>', () => {
    const tokens = [
      T.channel,
      ...enc('analysis'),
      T.message,
      ...enc('a'),
      T.start,
      ...enc('assistant'),
      T.channel,
      ...enc('final'),
      T.message,
      ...enc('b'),
      T.return,
    ];
    expect(parse(tokens)).toEqual([
      { item: { kind: 'reasoning' }, text: 'a', stop: 'end' },
      { item: { kind: 'message' }, text: 'b', stop: 'return' },
    ]);
  });

  it('never throws and keeps every item_start paired with one item_end on arbitrary token streams', () => {
    const special = fc.constantFrom<number>(...Object.values(T), 200_000, 201_087);
    const token = fc.oneof(fc.integer({ min: 0, max: 199_997 }), special, special);
    fc.assert(
      fc.property(fc.array(token, { maxLength: 120 }), chunkSizes(), (tokens, sizes) => {
        parse(tokens, sizes); // `parse` asserts the event grammar
      }),
      { numRuns: 300 },
    );
  });

  it('produces nothing for an empty stream and nothing more after finish', () => {
    const parser = profile.createOutputParser();
    expect(parser.push([])).toEqual([]);
    expect(parser.finish()).toEqual([]);
    expect(parser.push([T.channel])).toEqual([]);
    expect(parser.finish()).toEqual([]);
  });

  it('merges the deltas of one push into one event and never splits a character', () => {
    const tokens = profile.renderCompletion({ kind: 'message', role: 'assistant', text: '🦀🦀 日本語' });
    const parser = profile.createOutputParser();
    const events = parser.push(tokens);
    expect(events).toEqual([
      { type: 'item_start', item: { kind: 'message' } },
      { type: 'delta', text: '🦀🦀 日本語' },
      { type: 'item_end', stop: 'return' },
    ]);
  });
});
