import fc from 'fast-check';
import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { openWsSession } from '../testing/ws-session';
import { safetyV1 } from '@fastloop/proto';
import { moderationCalls } from '../clients/moderation-session';
import { OutputModerator, type OutputSink } from './output-moderator';

/** A sink that records what the client would receive. */
class Recorder implements OutputSink {
  readonly ops: string[] = [];
  /** Every call as made, deltas unmerged; `|` marks where a new batch of work began. */
  readonly raw: string[] = [];
  text = '';
  currentKind: OutputSink['currentKind'] = null;
  startMessage() {
    this.ops.push('start');
  }
  startReasoning() {
    this.ops.push('reasoning');
  }
  startFunctionCall(name: string) {
    this.ops.push(`call:${name}`);
  }
  startCustomToolCall(name: string) {
    this.ops.push(`custom:${name}`);
  }
  delta(text: string) {
    this.raw.push(`+${text}`);
    this.text += text;
    const last = this.ops.at(-1);
    if (last?.startsWith('"')) this.ops[this.ops.length - 1] = JSON.stringify(JSON.parse(last) + text);
    else this.ops.push(JSON.stringify(text));
  }
  endItem() {
    this.ops.push('end');
  }
}

const EMPTY = () => Promise.resolve(Buffer.alloc(0));
const settle = () => new Promise((r) => setImmediate(r));

/**
 * A moderator over the fake safety. `inFlight` above 1 sends batches before the previous answer,
 * through moderationCalls without a mux: Classify calls it orders, each on the previous answer's state.
 */
function moderated(flushChars: number, flushMs = 0, inputState = EMPTY, inFlight = 1, delay = 0) {
  const backends = new FakeBackends();
  const client = new Recorder();
  let stops = 0;
  const later = async (turns: number) => {
    for (let i = 0; i < turns; i++) await settle();
  };
  // Answers `delay` turns of the event loop late: the deltas that come meanwhile go in later batches.
  const direct = (r: safetyV1.ClassifyRequest) => later(delay).then(() => backends.classify(r));
  const moderator = new OutputModerator(client, {
    classify: inFlight > 1 ? moderationCalls(undefined, { deadlineMs: 1000 }, direct).classify : direct,
    inFlight,
    tenant: 't',
    model: 'm',
    inputState,
    flushMs,
    flushChars,
    onBlock: () => stops++,
  });
  return { moderator, client, backends, stops: () => stops };
}

describe('OutputModerator', () => {
  it('releases nothing once abandoned: a verdict arriving after the turn failed does not write to it', async () => {
    const m = moderated(1, 0, EMPTY, 1, 3);
    m.moderator.startMessage();
    m.moderator.delta('some text in flight');
    m.moderator.abandon();
    let written = '';
    m.client.delta = (text: string) => (written += text);
    for (let i = 0; i < 10; i++) await settle();
    expect(written).toBe('');
    expect(m.client.ops).toEqual(['start']); // released before any verdict: nothing can match before text
    expect(m.stops()).toBe(0);
  });

  it('finds a match that straddles two chunks and never releases it', async () => {
    const m = moderated(6);
    m.moderator.startMessage();
    for (const piece of ['hello there, BLO', 'CK-', 'ME and more text']) {
      m.moderator.delta(piece);
      await settle();
    }
    expect(await m.moderator.finish()).toBe(false);
    expect(m.moderator.blocked?.ruleId).toBe('marker');
    expect(m.stops()).toBe(1);
    expect(m.client.text).not.toContain('BLOCK-ME');
    expect('hello there, BLOCK-ME and more text'.startsWith(m.client.text)).toBe(true);
    // Two calls at least: the marker was split between them.
    expect(m.backends.classifyCalls.length).toBeGreaterThanOrEqual(2);
  });

  it('shows judged text at once, holding back only what could begin a match', async () => {
    const m = moderated(1000);
    m.moderator.startMessage();
    m.moderator.delta('Here it comes: BLO');
    await settle();
    expect(m.client.text).toBe('Here it comes: ');
    m.moderator.delta('OM, no match');
    await settle();
    expect(m.client.text).toBe('Here it comes: BLOOM, no match');
    expect(await m.moderator.finish()).toBe(true);
    expect(m.backends.classifyCalls.map((c) => c.output?.final)).toEqual([false, false, true]);
  });

  it('holds back one window, as before, when safety does not say what to hold (a service from before held_chars)', async () => {
    const backends = new FakeBackends();
    const client = new Recorder();
    const moderator = new OutputModerator(client, {
      classify: (r) => backends.classify(r).then(({ heldChars: _, ...old }) => old),
      tenant: 't',
      model: 'm',
      inputState: EMPTY,
      flushMs: 0,
      flushChars: 1000,
      onBlock: () => undefined,
    });
    moderator.startMessage();
    moderator.delta('Here it comes, all of it');
    await settle();
    // The fake's window is 9 characters (its longest marker): all but the last 8 are shown.
    expect(client.text).toBe('Here it comes, a');
    expect(await moderator.finish()).toBe(true);
    expect(client.text).toBe('Here it comes, all of it');
  });

  it('judges the output as the continuation of the input: its first call carries the input state', async () => {
    const input = Buffer.from('3|earlier text BLOCK');
    const m = moderated(1000, 0, () => Promise.resolve(input));
    m.moderator.startMessage();
    m.moderator.delta('-ME is split between the input and the output');
    expect(await m.moderator.finish()).toBe(false);
    expect(m.backends.classifyCalls[0].state).toBe(input);
    expect(m.client.text).toBe('');
  });

  it('sends the first text at once, then batches new text by time and by size', async () => {
    const m = moderated(8, 20);
    m.moderator.startMessage();
    m.moderator.delta('Hi ');
    await settle();
    expect(m.backends.classifyCalls.map((c) => c.items[0].text)).toEqual(['Hi ']);
    for (const piece of ['a', 'b', 'c']) m.moderator.delta(piece);
    await settle();
    expect(m.backends.classifyCalls).toHaveLength(1); // waiting up to 20 ms for more
    await new Promise((r) => setTimeout(r, 40));
    expect(m.backends.classifyCalls.map((c) => c.items[0].text)).toEqual(['Hi ', 'abc']);
    m.moderator.delta('0123456789'); // past 8 characters: sent without waiting
    await settle();
    expect(m.backends.classifyCalls.map((c) => c.items[0].text)).toEqual(['Hi ', 'abc', '0123456789']);
    expect(await m.moderator.finish()).toBe(true);
    expect(m.client.text).toBe('Hi abc0123456789');
  });

  it('releases clean output unchanged and in order once judged', async () => {
    const m = moderated(4);
    m.moderator.startReasoning();
    m.moderator.delta('thinking');
    m.moderator.endItem();
    expect(m.client.ops).toEqual(['reasoning']); // nothing judged yet
    m.moderator.startFunctionCall('f');
    m.moderator.delta('{"a":1}');
    m.moderator.endItem();
    expect(await m.moderator.finish()).toBe(true);
    expect(m.client.ops).toEqual(['reasoning', '"thinking"', 'end', 'call:f', '"{\\"a\\":1}"', 'end']);
  });

  it('releases what one verdict frees as one delta, however many deltas queued it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ minLength: 1, maxLength: 4 }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 30 }),
        async (pieces, chunkChars) => {
          const backends = new FakeBackends();
          const client = new Recorder();
          // Marks each verdict's release (its handler runs right after this one).
          const classify = (r: Parameters<FakeBackends['classify']>[0]) =>
            backends.classify(r).then((res) => (client.raw.push('|'), res));
          const moderator = new OutputModerator(client, {
            classify,
            tenant: 't',
            model: 'm',
            inputState: EMPTY,
            flushMs: 0,
            flushChars: chunkChars,
            onBlock: () => undefined,
          });
          moderator.startMessage();
          for (const [i, piece] of pieces.entries()) {
            client.raw.push('|');
            moderator.delta(piece);
            // Verdicts come back every few deltas, so several are queued when one frees them.
            if (i % 3 === 0) await settle();
          }
          moderator.endItem();
          client.raw.push('|');
          expect(await moderator.finish()).toBe(true);
          expect(client.text).toBe(pieces.join(''));
          expect(client.raw.some((op, i) => op.startsWith('+') && client.raw[i - 1]?.startsWith('+'))).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('fails closed when safety cannot be reached', async () => {
    const client = new Recorder();
    const moderator = new OutputModerator(client, {
      classify: () => Promise.reject(new Error('down')),
      tenant: 't',
      model: 'm',
      inputState: EMPTY,
      flushMs: 0,
      flushChars: 1,
      onBlock: () => undefined,
    });
    moderator.delta('some text');
    await expect(moderator.finish()).rejects.toThrow('down');
    expect(client.text).toBe('');
  });

  it('for any cut of the output into deltas and chunks, releases all of clean text and none of a match', async () => {
    const marker = 'BLOCK-ME';
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: fc.constantFrom(...'abc BLOCK-M\u{1F600}'.split('')), maxLength: 60 }),
        fc.option(fc.nat(60), { nil: undefined }),
        fc.array(fc.nat(80), { maxLength: 8 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 3 }),
        fc.nat(3),
        async (noise, at, cuts, chunkChars, inFlight, delay) => {
          const text = at === undefined ? noise : noise.slice(0, at) + marker + noise.slice(at);
          const m = moderated(chunkChars, 0, EMPTY, inFlight, delay);
          const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
          m.moderator.startMessage();
          let from = 0;
          for (const p of [...points, text.length]) {
            if (p > from) m.moderator.delta(text.slice(from, p));
            from = Math.max(from, p);
            await settle();
          }
          m.moderator.endItem();
          const released = await m.moderator.finish();
          expect(released).toBe(!text.includes(marker));
          if (released) expect(m.client.text).toBe(text);
          else {
            expect(m.client.text).not.toContain(marker);
            expect(text.startsWith(m.client.text)).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('output moderation in a turn', () => {
  it('stops a response whose output is blocked: incomplete, content_filter, matched text never sent', async () => {
    const backends = new FakeBackends();
    backends.script = () => ({
      kind: 'message',
      role: 'assistant',
      text: 'Sure, the value is BLOCK-ME and that is all you need to know.',
    });
    const { deps, registry } = fakeDeps(backends, true);
    deps.outputModeration = { flushMs: 0, flushChars: 5 };
    const events = await openWsSession(deps).create({ input: 'hi' });
    const last = events.at(-1);
    expect(last.type).toBe('response.incomplete');
    expect(last.response.incomplete_details).toEqual({ reason: 'content_filter' });
    expect(JSON.stringify(events)).not.toContain('BLOCK-ME');
    expect(await registry.metrics()).toMatch(/fastloop_edge_output_blocks_total\{rule="marker"\} 1/);
    expect(backends.classifyCalls.some((c) => c.items[0]?.itemType === 'output_text')).toBe(true);
  });

  it('judges the output on top of the input state, and the next turn on top of the output state', async () => {
    const backends = new FakeBackends();
    backends.script = (turn) => ({ kind: 'message', role: 'assistant', text: `answer number ${turn} ends here` });
    const { deps } = fakeDeps(backends, true);
    deps.outputModeration = { flushMs: 0, flushChars: 5 };
    const { create } = openWsSession(deps);
    const first = (await create({ input: 'hi' })).at(-1).response;
    expect(first.status).toBe('completed');
    const turn1 = backends.classifyCalls.length;
    await create({ previous_response_id: first.id, input: 'more' });
    const calls = backends.classifyCalls;
    const outputCalls = calls.slice(0, turn1).filter((c) => c.output);
    // The output's first call carries the input's state (1 item seen), not an empty one.
    expect(outputCalls[0].state.toString()).toMatch(/^1\|/);
    // The next turn's input call carries the state after the output: its tail ends with the output's text.
    const next = calls.slice(turn1).find((c) => !c.output && c.state.length > 0)!;
    expect(next.state.toString()).toBe('1|nds here'); // the fake's tail: the output's last 8 characters
  });
});
