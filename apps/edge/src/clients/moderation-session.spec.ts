import { safetyV1 } from '@fastloop/proto';
import { moderationCalls, type ModerationMux } from './moderation-session';

const { VERDICT_ALLOW } = safetyV1.Verdict;

function request(text: string, state = Buffer.alloc(0), final = false): safetyV1.ClassifyRequest {
  return {
    state,
    items: [{ itemType: 'output_text', role: 'assistant', text, source: safetyV1.ItemSource.ITEM_SOURCE_MODEL }],
    tenant: 't',
    model: 'm',
    output: { final },
  };
}

const answer = (state: string, heldChars = 0): safetyV1.ClassifyResponse => ({
  verdict: VERDICT_ALLOW,
  state: Buffer.from(state),
  findings: [],
  itemsSeen: 0,
  windowChars: 256,
  heldChars,
});

/** A mux whose one session answers the start, then, once broken, fails every batch it was sent. */
function failingAfterStart(): { mux: ModerationMux; sent: string[]; breakNow: () => void } {
  const sent: string[] = [];
  let fail: (err: Error) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => undefined);
  const mux = {
    unsupported: false,
    session: () => ({
      first: Promise.resolve(answer('')),
      send: (batch: safetyV1.ModerateBatch) => {
        sent.push(batch.text);
        return failed;
      },
      close: () => undefined,
    }),
  } as unknown as ModerationMux;
  return { mux, sent, breakNow: () => fail(new Error('stream broke')) };
}

describe('moderationCalls', () => {
  it('after a session fails under batches in flight, judges them by Classify calls in order, each on the previous answer', async () => {
    const session = failingAfterStart();
    const plain: safetyV1.ClassifyRequest[] = [];
    let answered = 0;
    const calls = moderationCalls(session.mux, { deadlineMs: 1000 }, async (r) => {
      plain.push(r);
      // The next call must not be made before this one's answer is in.
      expect(plain.length).toBe(answered + 1);
      await new Promise((resolve) => setImmediate(resolve));
      answered++;
      return answer(`after-${answered}`, answered);
    });
    const start = Buffer.from('input-state');
    const a = calls.classify(request('one ', start));
    const b = calls.classify(request('two '));
    const c = calls.classify(request('three', Buffer.alloc(0), true));
    session.breakNow();
    await expect(a).resolves.toMatchObject({ verdict: VERDICT_ALLOW });
    expect((await b).state.toString()).toBe('after-1');
    expect((await c).state.toString()).toBe('after-2');
    expect(session.sent).toEqual(['two ', 'three']);
    // The first batch not answered goes again from the start state with all the text up to its end.
    expect(plain[0]).toMatchObject({ state: start, output: { final: false } });
    expect(plain[0].items.map((i) => i.text)).toEqual(['one two ']);
    // The next on that answer's state and held characters, whatever state its request carried.
    expect(plain[1]).toMatchObject({ state: Buffer.from('after-1'), output: { final: true, heldBefore: 1 } });
    expect(plain[1].items.map((i) => i.text)).toEqual(['three']);
    // After the fallback, new batches go on in order too.
    const d = calls.classify(request('four', Buffer.from('stale')));
    expect((await d).state.toString()).toBe('after-3');
    expect(plain[2]).toMatchObject({ state: Buffer.from('after-2') });
  });

  it('without a mux, orders Classify calls on each previous answer so that batches may be pipelined', async () => {
    const plain: safetyV1.ClassifyRequest[] = [];
    const calls = moderationCalls(undefined, { deadlineMs: 1000 }, async (r) => {
      plain.push(r);
      return answer(`s${plain.length}`, 2);
    });
    const start = Buffer.from('input');
    const answers = await Promise.all([
      calls.classify(request('a', start)),
      calls.classify(request('b', start)),
      calls.classify(request('c', start, true)),
    ]);
    expect(answers.map((x) => x.state.toString())).toEqual(['s1', 's2', 's3']);
    expect(plain.map((r) => [r.state.toString(), r.items[0].text, r.output?.heldBefore])).toEqual([
      ['input', 'a', undefined],
      ['s1', 'b', 2],
      ['s2', 'c', 2],
    ]);
  });
});
