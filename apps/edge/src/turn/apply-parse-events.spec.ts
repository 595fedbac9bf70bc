import fc from 'fast-check';
import { getProfile, type ConversationEntry, type ParseEvent } from '@fastloop/model-profiles';
import type { ResponseCreateRequest, ResponseStreamEvent } from '@fastloop/protocol';
import { FakeBackends } from '../testing/fake-deps';
import { OutputModerator, type OutputSink } from '../safety/output-moderator';
import { applyParseEvents } from './apply-parse-events';
import { TurnWriter } from './turn-writer';

const profile = getProfile('harmony-o200k');
const settle = () => new Promise((r) => setImmediate(r));

/** Records sink calls as written, one entry per call (deltas are not merged here). */
class CallRecorder implements OutputSink {
  readonly calls: string[] = [];
  currentKind: OutputSink['currentKind'] = null;
  startMessage() {
    this.calls.push('message');
  }
  startReasoning() {
    this.calls.push('reasoning');
  }
  startFunctionCall(name: string, namespace?: string) {
    this.calls.push(`call:${namespace ?? ''}.${name}`);
  }
  startCustomToolCall(name: string, namespace?: string) {
    this.calls.push(`custom:${namespace ?? ''}.${name}`);
  }
  delta(text: string) {
    this.calls.push(`+${text}`);
  }
  endItem() {
    this.calls.push('end');
  }
}

/** Sink calls with consecutive deltas merged: what a client reconstructs from a stream. */
function merged(calls: readonly string[]): string[] {
  const out: string[] = [];
  for (const c of calls) {
    const last = out.at(-1);
    if (c.startsWith('+') && last?.startsWith('+')) out[out.length - 1] = last + c.slice(1);
    else out.push(c);
  }
  return out;
}

const parseEvent = (): fc.Arbitrary<ParseEvent> =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.string({ minLength: 1, maxLength: 6 }).map((text): ParseEvent => ({ type: 'delta', text })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom<ParseEvent>(
        { type: 'item_start', item: { kind: 'message' } },
        { type: 'item_start', item: { kind: 'reasoning' } },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constant<ParseEvent>({
        type: 'item_start',
        item: { kind: 'function_call', name: 'f', namespace: 'ns' },
      }),
    },
    { weight: 1, arbitrary: fc.constant<ParseEvent>({ type: 'item_end', stop: 'end' }) },
  );

describe('applyParseEvents', () => {
  it('writes one delta per output item of a chunk, with the same text and item boundaries', () => {
    fc.assert(
      fc.property(fc.array(parseEvent(), { maxLength: 30 }), (events) => {
        const perEvent = new CallRecorder();
        for (const ev of events) applyParseEvents(perEvent, [ev]);
        const chunked = new CallRecorder();
        applyParseEvents(chunked, events);
        expect(chunked.calls).toEqual(merged(perEvent.calls));
        // No two deltas in a row: each run of text between item events is one call.
        expect(chunked.calls.some((c, i) => c.startsWith('+') && chunked.calls[i - 1]?.startsWith('+'))).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('says whether the chunk opened an output item', () => {
    const sink = new CallRecorder();
    expect(
      applyParseEvents(sink, [
        { type: 'delta', text: 'a' },
        { type: 'item_end', stop: 'end' },
      ]),
    ).toBe(false);
    expect(
      applyParseEvents(sink, [
        { type: 'item_start', item: { kind: 'message' } },
        { type: 'delta', text: 'b' },
      ]),
    ).toBe(true);
  });
});

/** Text the harmony renderer writes verbatim: no special-token text, no moderation marker. */
const plainText = () =>
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).filter((s) => !s.includes('<|') && !/[A-Z]/.test(s));

const sampledEntry = (): fc.Arbitrary<ConversationEntry> =>
  fc.oneof(
    plainText().map((text): ConversationEntry => ({ kind: 'message', role: 'assistant', text })),
    plainText().map((text): ConversationEntry => ({ kind: 'reasoning', text })),
    fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), plainText(), { maxKeys: 3 }).map((args): ConversationEntry => ({
      kind: 'function_call',
      name: 'read_file',
      arguments: JSON.stringify(args),
      callId: '',
    })),
  );

/** What a client keeps of the item events: ids and sequence numbers dropped, deltas of an item concatenated. */
function itemView(events: readonly ResponseStreamEvent[]): unknown[] {
  const out: unknown[] = [];
  for (const event of events) {
    if ('delta' in event) {
      const last = out.at(-1) as typeof event | undefined;
      if (last?.type === event.type && last.output_index === event.output_index) last.delta += event.delta;
      else out.push({ type: event.type, output_index: event.output_index, delta: event.delta });
      continue;
    }
    const e = event;
    out.push(
      JSON.parse(
        JSON.stringify(e, (k, v: unknown) =>
          k === 'sequence_number' || k === 'id' || k === 'item_id' || k === 'call_id' ? undefined : v,
        ),
      ),
    );
  }
  return out;
}

/**
 * Relays `tokens` cut into `chunks` the way the output reader does (parser → optional output
 * moderation → TurnWriter); returns the item events and how many deltas each chunk produced.
 */
async function relay(tokens: readonly number[], cuts: readonly number[], chunkChars?: number) {
  const events: ResponseStreamEvent[] = [];
  const writer = new TurnWriter(
    { model: 'fake-model', input: 'hi' } as ResponseCreateRequest,
    { id: 'resp_1', model: 'fake-model' },
    (e) => events.push(e),
  );
  const backends = new FakeBackends();
  const moderator =
    chunkChars === undefined
      ? undefined
      : new OutputModerator(writer, {
          classify: (r) => backends.classify(r),
          tenant: 't',
          model: 'm',
          inputState: () => Promise.resolve(Buffer.alloc(0)),
          flushMs: 0,
          flushChars: chunkChars,
          onBlock: () => undefined,
        });
  const sink: OutputSink = moderator ?? writer;
  const parser = profile.createOutputParser();
  const deltasPerChunk: number[] = [];
  const points = [...new Set(cuts.map((c) => c % (tokens.length + 1))), tokens.length].sort((a, b) => a - b);
  let from = 0;
  for (const to of points) {
    if (to <= from) continue;
    const before = events.length;
    applyParseEvents(sink, parser.push(tokens.slice(from, to)));
    deltasPerChunk.push(events.slice(before).filter((e) => e.type.endsWith('.delta')).length);
    from = to;
    await settle();
  }
  applyParseEvents(sink, parser.finish());
  if (moderator) expect(await moderator.finish()).toBe(true);
  writer.endItem();
  return { events, deltasPerChunk };
}

describe('streaming one output in chunks', () => {
  it('gives the client the same items, text, reasoning and arguments as one token at a time, moderated or not', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(sampledEntry(), { minLength: 1, maxLength: 3 }),
        fc.array(fc.nat(400), { maxLength: 12 }),
        fc.option(fc.integer({ min: 1, max: 64 }), { nil: undefined }),
        async (entries, cuts, chunkChars) => {
          const tokens = entries.flatMap((e) => profile.renderCompletion(e));
          const perToken = await relay(
            tokens,
            tokens.map((_, i) => i),
          );
          const chunked = await relay(tokens, cuts, chunkChars);
          expect(itemView(chunked.events)).toEqual(itemView(perToken.events));
          // Without moderation's hold-back, a chunk yields at most one delta per item it touches.
          if (chunkChars === undefined)
            chunked.deltasPerChunk.forEach((n) => expect(n).toBeLessThanOrEqual(entries.length));
        },
      ),
      { numRuns: 100 },
    );
  });
});
