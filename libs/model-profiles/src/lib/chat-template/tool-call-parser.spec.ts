import fc from 'fast-check';
import type { ParseEvent } from '../model-profile';
import type { TextTokenizer } from './text-tokenizer';
import { HERMES_FORMAT, JsonValueScanner, ToolCallOutputParser } from './tool-call-parser';

/**
 * A tokenizer over a small vocabulary, greedy longest match: the markers and common JSON pieces are
 * single tokens (as in real vocabularies), everything else a character each, so a marker, a key or
 * a value can be cut anywhere a model's tokens could cut it.
 */
function fakeTokenizer(): TextTokenizer {
  const pieces = [
    '<tool_call>',
    '</tool_call>',
    '<|im_end|>',
    '{"',
    '":',
    '",',
    '"}',
    '}}',
    '}\n',
    '\n<',
    'name',
    'arguments',
    'city',
  ];
  const vocab: string[] = [...pieces];
  const ids = new Map<string, number>(pieces.map((p, i) => [p, i]));
  const idOf = (c: string) => {
    let id = ids.get(c);
    if (id === undefined) {
      id = vocab.push(c) - 1;
      ids.set(c, id);
    }
    return id;
  };
  const encode = (text: string) => {
    const out: number[] = [];
    for (let i = 0; i < text.length;) {
      const piece = pieces.find((p) => text.startsWith(p, i));
      const c = piece ?? String.fromCodePoint(text.codePointAt(i)!);
      out.push(idOf(c));
      i += c.length;
    }
    return out;
  };
  return {
    get vocabSize() {
      return vocab.length;
    },
    stopTokens: [],
    encodeText: encode,
    encodeMarkup: encode,
    decode: (tokens) => tokens.map((t) => vocab[t]).join(''),
  };
}

const tokenizer = fakeTokenizer();

interface Item {
  kind: string;
  name?: string;
  text: string;
  ended: boolean;
}

/** The items the events describe (deltas joined), however the stream was cut into pushes. */
function items(events: readonly ParseEvent[]): Item[] {
  const out: Item[] = [];
  for (const e of events) {
    if (e.type === 'item_start')
      out.push({ kind: e.item.kind, ...('name' in e.item ? { name: e.item.name } : {}), text: '', ended: false });
    else if (e.type === 'delta') out[out.length - 1].text += e.text;
    else out[out.length - 1].ended = true;
  }
  return out;
}

function parse(chunks: readonly (readonly number[])[], finish = true): ParseEvent[] {
  const parser = new ToolCallOutputParser(tokenizer, HERMES_FORMAT);
  const events = chunks.flatMap((c) => parser.push(c));
  return finish ? [...events, ...parser.finish()] : events;
}

const jsonArgs = fc
  .dictionary(
    fc.stringMatching(/^[a-z]{1,6}$/),
    fc.oneof(
      fc.integer({ min: -99, max: 99 }),
      fc.string({ maxLength: 10 }),
      fc.constant('} </tool_call> {'),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.integer(), { maxLength: 3 }),
    ),
    { maxKeys: 4 },
  )
  .chain((value) =>
    fc.constantFrom(JSON.stringify(value), JSON.stringify(value, null, 1), JSON.stringify(value).replace(/:/g, ': ')),
  );

/** A completion with a wrapped call: optional text first, spacing as various models write it. */
const wrappedCall = fc.record({
  before: fc.constantFrom('', 'Let me check. ', 'Sure!\n'),
  name: fc.constantFrom('get_weather', 'maps.route', 'f'),
  args: jsonArgs,
  spacing: fc.constantFrom(
    (n: string, a: string) => `<tool_call>\n{"name": ${n}, "arguments": ${a}}\n</tool_call>`,
    (n: string, a: string) => `<tool_call>{"name":${n},"arguments":${a}}</tool_call>`,
    (n: string, a: string) => `<tool_call>\n{ "name" : ${n} , "arguments" : ${a} } \n</tool_call>\n`,
  ),
  after: fc.constantFrom('', '<|im_end|>', ' Done.'),
});

describe('ToolCallOutputParser (Hermes)', () => {
  it('gives the same items at every split point of a wrapped call, and the arguments exactly', () => {
    fc.assert(
      fc.property(wrappedCall, ({ before, name, args, spacing, after }) => {
        const text = `${before}${spacing(JSON.stringify(name), args)}${after}`;
        const tokens = tokenizer.encodeText(text);
        const whole = items(parse([tokens]));
        const call = whole.find((i) => i.kind === 'function_call');
        expect(call).toEqual({ kind: 'function_call', name: name.split('.').pop(), text: args, ended: true });
        for (const i of whole.filter((w) => w.kind === 'message'))
          expect(i.text).not.toMatch(/<tool_call|<\/tool_call|<\|im_end/);
        for (let k = 0; k <= tokens.length; k++)
          expect(items(parse([tokens.slice(0, k), tokens.slice(k)]))).toEqual(whole);
        // One token at a time too (every boundary at once).
        expect(items(parse(tokens.map((t) => [t])))).toEqual(whole);
      }),
      { numRuns: 200 },
    );
  });

  it('never leaks wrapper text when the stream is cut anywhere: a cut call stays open with the arguments so far', () => {
    fc.assert(
      fc.property(wrappedCall, ({ name, args, spacing }) => {
        const text = spacing(JSON.stringify(name), args);
        const tokens = tokenizer.encodeText(text);
        for (let k = 1; k <= tokens.length; k++) {
          const got = items(parse([tokens.slice(0, k)]));
          const calls = got.filter((i) => i.kind === 'function_call');
          expect(got.filter((i) => i.kind === 'message')).toEqual([]); // never message text
          expect(calls).toHaveLength(1);
          const [call] = calls;
          expect(name.split('.').pop()!.startsWith(call.name!.split('.').pop()!) || name.startsWith(call.name!)).toBe(
            true,
          );
          expect(args.startsWith(call.text)).toBe(true);
          // The item ends exactly when its arguments are whole, never before.
          expect(call.ended).toBe(call.text === args);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('reads the cut call of the reported bug as an open call with the arguments it had, nothing after them', () => {
    const text = '<tool_call>\n{"name": "get_weather", "arguments": { "city": "Sop.", "days": 5 } }\n</tool_call';
    const got = items(parse([tokenizer.encodeText(text)]));
    expect(got).toEqual([
      { kind: 'function_call', name: 'get_weather', text: '{ "city": "Sop.", "days": 5 }', ended: true },
    ]);
    const cut = items(parse([tokenizer.encodeText('<tool_call>\n{"name": "get_weather", "arguments": {"city": "So')]));
    expect(cut).toEqual([{ kind: 'function_call', name: 'get_weather', text: '{"city": "So', ended: false }]);
    const early = items(parse([tokenizer.encodeText('Hi <tool_call>\n{"name": "get_w')]));
    expect(early).toEqual([
      { kind: 'message', text: 'Hi', ended: true },
      { kind: 'function_call', name: 'get_w', text: '', ended: false },
    ]);
  });

  it('leaves a malformed finished call as text and keeps parsing after it', () => {
    const got = items(parse([tokenizer.encodeText('<tool_call>not json</tool_call>After.')]));
    expect(got.map((i) => i.text).join('')).toBe('<tool_call>not json</tool_call>After.');
  });
});

describe('JsonValueScanner', () => {
  it('ends a value exactly where JSON.parse would, wherever the text is cut', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.array(fc.nat(8), { maxLength: 20 }), (value, sizes) => {
        const json = JSON.stringify(value);
        fc.pre(typeof value === 'object' || typeof value === 'string');
        const text = `${json}}\n</tool_call>`;
        const scanner = new JsonValueScanner();
        let taken = 0;
        let at = 0;
        for (const size of [...sizes, text.length]) {
          if (scanner.done || at >= text.length) break;
          const piece = text.slice(at, at + size);
          taken += scanner.feed(piece);
          at += piece.length;
        }
        expect(scanner.done).toBe(true);
        expect(text.slice(0, taken)).toBe(json);
      }),
      { numRuns: 300 },
    );
  });
});
