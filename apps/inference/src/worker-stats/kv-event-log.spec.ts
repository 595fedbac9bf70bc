import fc from 'fast-check';
import { SessionCache } from '../session-cache';
import type { inferenceV1 } from '@fastloop/proto';
import { KvEventLog, splitScopedKey } from './kv-event-log';

const seq = (n: number) => Uint32Array.from({ length: n }, (_, i) => i);

/** What a router builds from the messages it reads: scoped key → tokens and root. */
function applyTo(view: Map<string, { tokens: number; root: string }>, changes: ReturnType<KvEventLog['read']>): void {
  if (changes.snapshot) view.clear();
  for (const r of changes.removed) view.delete(`${r.cacheSalt}\u0000${r.sessionKey}`);
  for (const k of changes.kept as inferenceV1.HeldSequence[])
    view.set(`${k.cacheSalt}\u0000${k.sessionKey}`, { tokens: k.tokens, root: k.prefixKey });
}

/** Scoped keys as the worker writes them (generate-service scopedKey): salt NUL key. */
const scoped = (salt: string, key: string) => (salt === '' ? key : `${salt}\u0000${key}`);

describe('KvEventLog', () => {
  it('gives a new reader a snapshot, then only what changed, the latest state of a key winning', () => {
    const log = new KvEventLog();
    const cache = new SessionCache({ maxTokens: 100, maxEntries: 10, listener: log });
    cache.set(scoped('s1', 'a'), seq(10), { root: { key: 'k:sys', tokens: 10 } });
    const reader = log.subscribe();
    const first = log.read(reader);
    expect(first.snapshot).toBe(true);
    expect(first.kept).toEqual([{ cacheSalt: 's1', sessionKey: 'a', tokens: 10, prefixKey: 'k:sys', rootTokens: 10 }]);
    expect(log.hasChanges(reader)).toBe(false);

    cache.set(scoped('s1', 'b'), seq(20), { moveFrom: scoped('s1', 'a') });
    cache.set(scoped('s1', 'c'), seq(5));
    cache.delete(scoped('s1', 'c'));
    const next = log.read(reader);
    expect(next.snapshot).toBe(false);
    // The continuation b keeps a's root; c came and went between reads.
    expect(next.kept).toEqual([{ cacheSalt: 's1', sessionKey: 'b', tokens: 20, prefixKey: 'k:sys', rootTokens: 10 }]);
    expect(next.removed).toEqual(
      expect.arrayContaining([
        { cacheSalt: 's1', sessionKey: 'a' },
        { cacheSalt: 's1', sessionKey: 'c' },
      ]),
    );
  });

  it('reports evictions', () => {
    const log = new KvEventLog();
    const cache = new SessionCache({ maxTokens: 10, maxEntries: 10, listener: log });
    const reader = log.subscribe();
    log.read(reader);
    cache.set('a', seq(6));
    cache.set('b', seq(6));
    const changes = log.read(reader);
    expect(changes.kept.map((k) => k.sessionKey)).toEqual(['b']);
    expect(changes.removed).toEqual([{ cacheSalt: '', sessionKey: 'a' }]);
  });

  it('sends a snapshot instead of an unbounded backlog to a reader that stopped reading', () => {
    const log = new KvEventLog(4);
    const cache = new SessionCache({ maxTokens: 1_000, maxEntries: 3, listener: log });
    const reader = log.subscribe();
    log.read(reader);
    for (let i = 0; i < 20; i++) cache.set(`k${i}`, seq(1));
    const changes = log.read(reader);
    expect(changes.snapshot).toBe(true);
    expect(changes.kept.map((k) => k.sessionKey).sort()).toEqual(['k17', 'k18', 'k19']);
  });

  it('splits scoped keys into salt and key', () => {
    expect(splitScopedKey('salt\u0000resp_1')).toEqual(['salt', 'resp_1']);
    expect(splitScopedKey('resp_1')).toEqual(['', 'resp_1']);
  });

  it('lets every reader rebuild exactly what the cache holds, whenever it reads', () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('set' as const),
        key: fc.integer({ min: 0, max: 5 }),
        from: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
        tokens: fc.integer({ min: 1, max: 40 }),
        root: fc.option(fc.constantFrom('k:a', 'k:b'), { nil: undefined }),
      }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 5 }) }),
      fc.record({ kind: fc.constant('read' as const), reader: fc.integer({ min: 0, max: 1 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.integer({ min: 2, max: 50 }), (ops, maxPending) => {
        const log = new KvEventLog(maxPending);
        const cache = new SessionCache({ maxTokens: 100, maxEntries: 4, listener: log });
        const key = (n: number) => scoped(n % 2 === 0 ? 'salt' : '', `resp_${n}`);
        const readers = [log.subscribe(), log.subscribe()];
        const views = [new Map(), new Map()] as Map<string, { tokens: number; root: string }>[];
        for (const o of ops) {
          if (o.kind === 'set')
            cache.set(key(o.key), seq(o.tokens), {
              moveFrom: o.from === undefined ? undefined : key(o.from),
              root: o.root ? { key: o.root, tokens: o.tokens } : undefined,
            });
          else if (o.kind === 'delete') cache.delete(key(o.key));
          else applyTo(views[o.reader], log.read(readers[o.reader]));
        }
        for (let r = 0; r < 2; r++) {
          applyTo(views[r], log.read(readers[r]));
          const expected = new Map<string, number>();
          for (let n = 0; n <= 5; n++) {
            const tokens = cache.get(key(n))?.length;
            if (tokens !== undefined) {
              const [salt, k] = splitScopedKey(key(n));
              expected.set(`${salt}\u0000${k}`, tokens);
            }
          }
          expect(new Map([...views[r]].map(([k, v]) => [k, v.tokens]))).toEqual(expected);
        }
      }),
    );
  });
});
