import pino from 'pino';
import { ApiError } from '@fastloop/protocol';
import { LargeBodyGate } from '../turn/large-body-gate';
import { KeyedPacer } from '@fastloop/service-kit';
import { fakeDeps } from '../testing/fake-deps';
import { inPlaceJsonParser } from '../testing/in-place-json-parser';
import { openWsSession } from '../testing/ws-session';
import { OrderedInbox } from './ordered-inbox';

const BIG = 1_000;
const logger = pino({ level: 'silent' });
const on = (
  drained: () => void,
  failed = (err: ApiError): void => {
    throw new Error(`no handler should fail here: ${err.message}`);
  },
) => ({ drained, failed, logger });

/** Tenant `t`'s inbox on a gate of its own, recording the errors it reports; `done` once nothing waits. */
function reportingInbox() {
  const gate = new LargeBodyGate(BIG);
  const errors: ApiError[] = [];
  const { drained, done } = drainSignal();
  const inbox = new OrderedInbox(
    gate,
    't',
    on(drained, (err) => void errors.push(err)),
  );
  return { gate, inbox, errors, done };
}

/** A promise resolved when `drained` is called (the inbox's signal that nothing waits). */
function drainSignal(): { drained: () => void; done: Promise<void> } {
  let drained!: () => void;
  const done = new Promise<void>((r) => (drained = r));
  return { drained, done };
}

describe('OrderedInbox', () => {
  it('handles messages at once without a gate, whatever their size', () => {
    const order: string[] = [];
    const inbox = new OrderedInbox(
      undefined,
      't',
      on(() => order.push('drained')),
    );
    inbox.submit(BIG * 10, () => order.push('large'));
    inbox.submit(1, () => order.push('small'));
    expect(order).toEqual(['large', 'small']);
  });

  it('keeps arrival order: a small message waits behind a large one that waits for its turn', async () => {
    const { gate, inbox, errors, done } = reportingInbox();
    const order: string[] = [];
    void gate.run('other', BIG, () => order.push('other tenant'));
    inbox.submit(BIG, () => order.push('large'));
    inbox.submit(1, () => order.push('small'));
    expect(inbox.pending).toBe(2);
    expect(order).toEqual(['other tenant']);
    await done;
    expect(order).toEqual(['other tenant', 'large', 'small']);
    expect(errors).toEqual([]);
    expect(inbox.pending).toBe(0);
    inbox.submit(1, () => order.push('at once'));
    expect(order.at(-1)).toBe('at once');
  });

  it("paces a tenant's large messages to its byte rate, while another tenant's go at once", async () => {
    // 10 KB/s and a 1 KB burst: h's second and third 2 KB messages wait ~0.1 s and ~0.3 s.
    const gate = new LargeBodyGate(BIG, new KeyedPacer({ perSecond: 10 * BIG, burst: BIG }));
    const order: string[] = [];
    const { drained, done } = drainSignal();
    const hostile = new OrderedInbox(
      gate,
      'h',
      on(() => drained()),
    );
    const start = performance.now();
    for (const name of ['h1', 'h2', 'h3']) hostile.submit(2 * BIG, () => order.push(name));
    await new Promise((r) => setTimeout(r, 20));
    new OrderedInbox(
      gate,
      'n',
      on(() => undefined),
    ).submit(2 * BIG, () => order.push('n1'));
    await done;
    expect(order).toEqual(['h1', 'n1', 'h2', 'h3']);
    expect(performance.now() - start).toBeGreaterThanOrEqual(290); // a lower bound: the pace, not speed
  });

  it('reports a handler that throws and still hands on the messages behind it, waiting or not', async () => {
    const { gate, inbox, errors, done } = reportingInbox();
    const order: string[] = [];
    let cleaned = 0;
    inbox.submit(
      1,
      () => {
        throw new Error('at once');
      },
      () => cleaned++,
    );
    void gate.run('other', BIG, () => order.push('other tenant'));
    inbox.submit(BIG, () => {
      throw new Error('waiting');
    });
    inbox.submit(1, () => order.push('small'));
    await done;
    expect(errors.map((e) => e.status)).toEqual([500, 500]); // the client is told a server error, not the defect's message
    expect(cleaned).toBe(1);
    expect(order).toEqual(['other tenant', 'small']);
    expect(inbox.pending).toBe(0);
  });
});

describe('OrderedInbox with work off the event loop', () => {
  it('hands a prepared message its result in arrival order, even when nothing waits, and the small ones behind it wait', async () => {
    const { gate, inbox, errors, done } = reportingInbox();
    const order: string[] = [];
    let finish!: (value: string) => void;
    const prepared = new Promise<string>((r) => (finish = r));
    inbox.submit(
      1,
      (value: string) => order.push(value),
      undefined,
      () => prepared,
    );
    inbox.submit(1, () => order.push('small'));
    expect(inbox.pending).toBe(2);
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]);
    finish('prepared');
    await done;
    expect(order).toEqual(['prepared', 'small']);
    expect(errors).toEqual([]);
  });

  it('gives back what a message held and reports it when its preparation fails; the messages behind it go on', async () => {
    const { inbox, errors, done } = reportingInbox();
    const order: string[] = [];
    let cleaned = 0;
    const busy = new ApiError({ status: 429, type: 'requests', code: 'rate_limit_exceeded', message: 'later' });
    inbox.submit(
      BIG,
      () => order.push('never'),
      () => cleaned++,
      () => Promise.reject(busy),
    );
    inbox.submit(1, () => order.push('small'));
    await done;
    expect(cleaned).toBe(1);
    expect(errors).toEqual([busy]);
    expect(order).toEqual(['small']);
  });
});

describe('ResponsesSession with large messages taking turns', () => {
  it('answers a large response.create and the one after it in order, and whenIdle waits for both', async () => {
    const { deps, backends } = fakeDeps();
    const gate = new LargeBodyGate(BIG);
    deps.largeBodies = gate;
    const { session, events } = openWsSession(deps);
    const create = (input: string) =>
      JSON.stringify({ type: 'response.create', model: 'fake-model', store: false, input, max_output_tokens: 16 });
    void gate.run('other', BIG, () => undefined); // another tenant's large stage holds the gate
    session.receive(create('a'.repeat(2 * BIG)));
    session.receive(create('second'));
    expect(events).toHaveLength(0);
    expect(session.busy).toBe(true);
    await session.whenIdle();
    session.close();
    const completed = events.filter((e) => e.type === 'response.completed');
    expect(completed).toHaveLength(2);
    const classified = backends.classifyCalls.map((c) => c.items.map((i) => i.text).join(''));
    expect(classified.filter((t) => t === 'second' || t.startsWith('aaa'))).toEqual(['a'.repeat(2 * BIG), 'second']);
    const created = events.filter((e) => e.type === 'response.created').map((e) => e.response.id);
    expect(created).toEqual(completed.map((e) => e.response.id));
  });

  it("parses a large frame with the gate's parser, validates it here, and answers bad JSON invalid_json", async () => {
    const { deps, backends } = fakeDeps();
    const parsed: { tenant: string; bytes: number }[] = [];
    deps.largeBodies = new LargeBodyGate(BIG, undefined, inPlaceJsonParser(parsed));
    const { session, events } = openWsSession(deps, { maxPayloadBytes: 100 * BIG });
    const large = Buffer.from(
      JSON.stringify({ type: 'response.create', model: 'fake-model', store: false, input: 'b'.repeat(2 * BIG) }),
    );
    const bad = Buffer.from('{"type":"response.create","input":"' + 'c'.repeat(2 * BIG));
    const oversized = Buffer.alloc(100 * BIG + 1, 0x20);
    session.receive(large, large.length);
    session.receive(bad, bad.length);
    session.receive(oversized, oversized.length);
    session.receive(Buffer.from('{'), 1);
    await session.whenIdle();
    session.close();
    expect(parsed.map((p) => p.bytes)).toEqual([large.length, bad.length]); // the oversized frame is refused unparsed, the small one parsed here
    expect(events.filter((e) => e.type === 'response.completed')).toHaveLength(1);
    expect(backends.classifyCalls.some((c) => c.items.some((i) => i.text === 'b'.repeat(2 * BIG)))).toBe(true);
    const errors = events.filter((e) => e.type === 'error').map((e) => e.error.code);
    expect(errors).toEqual(['invalid_json', 'payload_too_large', 'invalid_json']);
  });
});
