import { RenderDeadlineError } from '@fastloop/model-profiles';
import { ApiError } from '@fastloop/protocol';
import { DomainError, ErrorCode, KeyedPacer } from '@fastloop/service-kit';
import { inPlaceJsonParser } from '../testing/in-place-json-parser';
import { LargeBodyGate } from './large-body-gate';

const BIG = 1_000;

describe('LargeBodyGate', () => {
  it('runs a small stage at once, even while a large one holds the gate', async () => {
    const gate = new LargeBodyGate(BIG);
    const order: string[] = [];
    const large = gate.run('a', BIG, () => order.push('large'));
    const small = gate.run('b', BIG - 1, () => order.push('small'));
    expect(order).toEqual(['large', 'small']);
    await Promise.all([large, small]);
  });

  it('lets the event loop turn between two large stages (I/O queued meanwhile runs first)', async () => {
    const gate = new LargeBodyGate(BIG);
    const order: string[] = [];
    setImmediate(() => order.push('probe'));
    await Promise.all([gate.run('a', BIG, () => order.push('first')), gate.run('a', BIG, () => order.push('second'))]);
    expect(order).toEqual(['first', 'probe', 'second']);
  });

  it('runs large stages back to back when off (minBytes 0), which is what it prevents', async () => {
    const gate = new LargeBodyGate(0);
    const order: string[] = [];
    setImmediate(() => order.push('probe'));
    await Promise.all([gate.run('a', BIG, () => order.push('first')), gate.run('a', BIG, () => order.push('second'))]);
    expect(order).toEqual(['first', 'second']);
    await new Promise((r) => setImmediate(r));
  });

  it('takes waiting stages a tenant at a time, round robin', async () => {
    const gate = new LargeBodyGate(BIG);
    const order: string[] = [];
    const stage = (tenant: string, name: string) => gate.run(tenant, BIG, () => order.push(name));
    const all = [stage('h', 'h0'), stage('h', 'h1'), stage('h', 'h2'), stage('h', 'h3'), stage('n', 'n1')];
    expect(gate.queued).toBe(4);
    await Promise.all(all);
    expect(order).toEqual(['h0', 'h1', 'n1', 'h2', 'h3']);
    expect(gate.queued).toBe(0);
  });

  it('passes the gate on when a stage throws', async () => {
    const gate = new LargeBodyGate(BIG);
    const failed = gate.run('a', BIG, () => {
      throw new Error('bad body');
    });
    const next = gate.run('b', BIG, () => 'served');
    await expect(failed).rejects.toThrow('bad body');
    await expect(next).resolves.toBe('served');
  });

  it('holds the gate only for the synchronous part of a stage that returns a promise', async () => {
    const gate = new LargeBodyGate(BIG);
    let finish!: () => void;
    const slow = gate.run('a', BIG, () => new Promise<void>((r) => (finish = r)));
    await expect(gate.run('b', BIG, () => 'next')).resolves.toBe('next');
    finish();
    await slow;
  });

  it("paces a tenant's large bodies on admission, never its small ones", async () => {
    const gate = new LargeBodyGate(BIG, new KeyedPacer({ perSecond: 10 * BIG, burst: BIG }));
    expect(gate.admit('h', 2 * BIG)).toBeUndefined(); // the burst, and a debt of 0.1 s
    const paced = gate.admit('h', BIG);
    expect(paced).toBeInstanceOf(Promise);
    expect(gate.admit('h', BIG - 1)).toBeUndefined(); // small: not paced, not charged
    expect(gate.admit('n', BIG)).toBeUndefined(); // another tenant's burst
    await paced;
  });

  it('parses a large body with its parser, and leaves a small one, or any without a parser, to the caller', async () => {
    const seen: { tenant: string; bytes: number }[] = [];
    const parser = inPlaceJsonParser(seen);
    const gate = new LargeBodyGate(BIG, undefined, parser);
    const large = Buffer.from(JSON.stringify({ a: 'x'.repeat(BIG) }));
    expect(gate.parsesOffThread(large.length)).toBe(true);
    await expect(gate.parse('t', large)).resolves.toEqual({ ok: true, value: { a: 'x'.repeat(BIG) } });
    expect(gate.parsesOffThread(BIG - 1)).toBe(false);
    expect(gate.parse('t', Buffer.alloc(BIG - 1))).toBeUndefined();
    expect(new LargeBodyGate(BIG).parse('t', large)).toBeUndefined();
    expect(new LargeBodyGate(BIG).parsesOffThread(large.length)).toBe(false);
    expect(seen).toEqual([{ tenant: 't', bytes: large.length }]);
  });

  it("answers a parse that waited past the pool's budget 429, and passes the pool's other failures on", async () => {
    const late = new LargeBodyGate(BIG, undefined, () => Promise.reject(new RenderDeadlineError(2_000)));
    const err = await late.parse('t', Buffer.alloc(BIG))!.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    expect((err as ApiError).message).toMatch(/EDGE_RENDER_TIMEOUT_MS/);
    const crashed = new DomainError(ErrorCode.workerCrashed, 'thread died');
    const failing = new LargeBodyGate(BIG, undefined, () => Promise.reject(crashed));
    await expect(failing.parse('t', Buffer.alloc(BIG))).rejects.toBe(crashed);
  });

  it('reads a parsed value back as a stage that takes its turn with the others', async () => {
    const gate = new LargeBodyGate(BIG, undefined, inPlaceJsonParser());
    const order: string[] = [];
    const first = gate.run('other', BIG, () => order.push('other'));
    const parsed = gate.parse('t', Buffer.from(JSON.stringify({ a: 'x'.repeat(BIG) })))!.then((p) => {
      order.push('parsed');
      return p;
    });
    const second = gate.run('other', BIG, () => order.push('other again'));
    await Promise.all([first, second]);
    await expect(parsed).resolves.toEqual({ ok: true, value: { a: 'x'.repeat(BIG) } });
    // Read back at once, the value would have come before the stage queued ahead of it.
    expect(order).toEqual(['other', 'other again', 'parsed']);
  });

  it('runs two stages of a small body at once, the second before any promise settles', () => {
    const gate = new LargeBodyGate(BIG);
    const order: string[] = [];
    void gate.runTwo(
      't',
      BIG - 1,
      () => order.push('check'),
      () => order.push('encode'),
    );
    expect(order).toEqual(['check', 'encode']);
  });
});
