import fc from 'fast-check';
import { commonPrefixLength, SequencePool } from './sequence-pool';

const held = (...contextTokens: number[]) => ({ contextTokens });

describe('SequencePool', () => {
  it('gives a continuation the sequence that already holds its prefix', () => {
    const pool = new SequencePool([held(1, 2, 3), held(1, 9, 9, 9)]);
    const lease = pool.tryAcquire([1, 9, 9, 9, 4], 's2');
    expect(lease?.commonPrefix).toBe(4);
    expect(lease?.slot.sequence.contextTokens).toEqual([1, 9, 9, 9]);
  });

  it('matches content only within one cache salt, and never reuses a discarded sequence', () => {
    const pool = new SequencePool([held(), held()]);
    const a = pool.tryAcquire([1, 2, 3], 'a', 'tenant-a')!;
    (a.slot.sequence as { contextTokens: number[] }).contextTokens = [1, 2, 3, 4];
    pool.release(a.slot);
    expect(pool.tryAcquire([1, 2, 3, 4, 5], 'b', 'tenant-b')!.commonPrefix).toBe(0);
    const again = pool.tryAcquire([1, 2, 3, 4, 5], 'a2', 'tenant-a')!;
    expect(again.commonPrefix).toBe(4);
    pool.release(again.slot, true); // cancelled: maybe a blocked prompt
    const third = pool.tryAcquire([1, 2, 3, 4, 5], 'a3', 'tenant-a')!;
    expect(third.commonPrefix).toBe(0);
    // A finished call's sequence is dropped by ForgetSession.
    (third.slot.sequence as { contextTokens: number[] }).contextTokens = [1, 2, 3, 4, 5];
    pool.release(third.slot);
    expect(pool.discardSession('a3')).toBe(true);
    expect(pool.tryAcquire([1, 2, 3, 4, 5], 'a4', 'tenant-a')!.commonPrefix).toBe(0);
  });

  it('reuses the least recently used sequence when no idle one shares a prefix', () => {
    const pool = new SequencePool([held(), held(), held()]);
    const a = pool.tryAcquire([5], 'a')!;
    const b = pool.tryAcquire([6], 'b')!;
    pool.release(b.slot);
    pool.release(a.slot);
    const c = pool.tryAcquire([7], 'c')!;
    expect(c.commonPrefix).toBe(0);
    expect(c.slot).not.toBe(a.slot);
    expect(c.slot).not.toBe(b.slot); // the never-used third slot is the least recent
    const d = pool.tryAcquire([8], 'd')!;
    expect(d.slot).toBe(b.slot); // then b, released before a
  });

  it('does not erase a long conversation for a new one that shares only its header', () => {
    const conversation = held(1, 5, 6, 7, 8, 9, 10, 11, 12);
    const empty = held();
    const pool = new SequencePool([conversation, empty]);
    const lease = pool.tryAcquire([1, 5, 99], 'new')!;
    expect(lease.slot.sequence).toBe(empty);
    // ...but a prompt that continues it gets it.
    pool.release(lease.slot);
    expect(pool.tryAcquire([1, 5, 6, 7, 8, 9, 10, 11, 12, 13], 'old')!.slot.sequence).toBe(conversation);
  });

  it('takes the least recently used sequence when every one holds another conversation', () => {
    const pool = new SequencePool([held(1, 2, 3, 4), held(1, 6, 7, 8)]);
    const first = pool.tryAcquire([1, 2, 3, 4, 5], 'a')!;
    pool.release(first.slot);
    const lease = pool.tryAcquire([9, 9], 'c')!;
    expect(lease.slot).not.toBe(first.slot);
    expect(lease.commonPrefix).toBe(0);
  });

  it('never hands out a busy sequence, and a waiter gets the one released', async () => {
    const pool = new SequencePool([held()]);
    const first = pool.tryAcquire([1], 'a')!;
    expect(pool.tryAcquire([1], 'b')).toBeUndefined();
    const waiting = pool.acquire([1], 'b', new AbortController().signal);
    pool.release(first.slot);
    expect((await waiting)?.slot).toBe(first.slot);
  });

  it('stops waiting when the caller aborts', async () => {
    const pool = new SequencePool([held()]);
    pool.tryAcquire([1], 'a');
    const controller = new AbortController();
    const waiting = pool.acquire([1], 'b', controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBeUndefined();
  });

  it('measures the common prefix exactly', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(3)), fc.array(fc.nat(3)), (a, b) => {
        const n = commonPrefixLength(a, b);
        expect(a.slice(0, n)).toEqual(b.slice(0, n));
        if (n < Math.min(a.length, b.length)) expect(a[n]).not.toBe(b[n]);
      }),
    );
  });

  it('makes a prompt that continues a settling sequence wait for it, and lets others take an idle one', async () => {
    const pool = new SequencePool([held(), held()]);
    const a = pool.tryAcquire([1, 2, 3], 'a')!;
    let finish!: () => void;
    const work = new Promise<void>((resolve) => (finish = resolve));
    pool.settle(a.slot, [1, 2, 3, 4, 5], work);
    const signal = new AbortController().signal;
    const other = await pool.acquire([7, 8], 'b', signal);
    expect(other?.slot).not.toBe(a.slot); // shares nothing with the settling one: no wait
    pool.release(other!.slot);
    let leased: Awaited<ReturnType<typeof pool.acquire>>;
    const waiting = pool.acquire([1, 2, 3, 4, 5, 6], 'a2', signal).then((l) => (leased = l));
    await new Promise((r) => setTimeout(r, 10));
    expect(leased).toBeUndefined();
    (a.slot.sequence as { contextTokens: number[] }).contextTokens = [1, 2, 3, 4, 5];
    finish();
    await waiting;
    expect(leased!.slot).toBe(a.slot);
    expect(leased!.commonPrefix).toBe(5);
  });

  it('forgets a session whose sequence is still settling', async () => {
    const pool = new SequencePool([held()]);
    const a = pool.tryAcquire([1, 2, 3], 'blocked')!;
    let finish!: () => void;
    pool.settle(a.slot, [1, 2, 3, 4], new Promise<void>((resolve) => (finish = resolve)));
    expect(pool.discardSession('blocked')).toBe(true);
    (a.slot.sequence as { contextTokens: number[] }).contextTokens = [1, 2, 3, 4];
    finish();
    await pool.settled();
    expect(pool.tryAcquire([1, 2, 3, 4, 5], 'next')!.commonPrefix).toBe(0);
  });
});
