import { KvView } from './kv-view';

const held = (sessionKey: string, tokens: number, prefixKey = '', rootTokens = 0, cacheSalt = 's') => ({
  cacheSalt,
  sessionKey,
  tokens,
  prefixKey,
  rootTokens,
});

describe('KvView', () => {
  it('tracks sessions and roots from a snapshot and later changes', () => {
    const kv = new KvView();
    kv.apply({ snapshot: true, removed: [], kept: [held('r1', 500, 'k:a', 400), held('r2', 700, 'k:a', 600)] });
    expect(kv.sessionTokens('s', 'r1')).toBe(500);
    expect(kv.sessionTokens('other-tenant', 'r1')).toBe(0);
    expect(kv.rootTokens('s', 'k:a')).toBe(500);
    expect(kv.sessionRoot('s', 'r2')).toBe('k:a');

    kv.apply({ snapshot: false, removed: [{ cacheSalt: 's', sessionKey: 'r1' }], kept: [held('r3', 900, 'k:a', 400)] });
    expect(kv.sessionTokens('s', 'r1')).toBe(0);
    expect(kv.rootTokens('s', 'k:a')).toBe(500);
    kv.apply({
      snapshot: false,
      removed: [
        { cacheSalt: 's', sessionKey: 'r2' },
        { cacheSalt: 's', sessionKey: 'r3' },
      ],
      kept: [],
    });
    expect(kv.rootTokens('s', 'k:a')).toBe(0);
    expect(kv.size).toBe(0);
  });

  it('replaces everything on a snapshot and counts a re-kept session once', () => {
    const kv = new KvView();
    kv.apply({ snapshot: true, removed: [], kept: [held('r1', 100, 'k:a', 100)] });
    kv.apply({ snapshot: false, removed: [], kept: [held('r1', 150, 'k:a', 100)] });
    expect(kv.rootTokens('s', 'k:a')).toBe(100);
    expect(kv.sessionTokens('s', 'r1')).toBe(150);
    kv.apply({ snapshot: true, removed: [], kept: [held('r9', 10)] });
    expect(kv.sessionTokens('s', 'r1')).toBe(0);
    expect(kv.rootTokens('s', 'k:a')).toBe(0);
    expect(kv.size).toBe(1);
  });
});
