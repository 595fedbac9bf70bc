import type { inferenceV1 } from '@fastloop/proto';
import type { SessionCacheListener, SessionRemoval, SessionRoot } from '../session-cache';

/** What the log knows of one held sequence. */
interface Held {
  readonly salt: string;
  readonly sessionKey: string;
  tokens: number;
  prefixKey: string;
  rootTokens: number;
}

/** One reader's changes not sent yet: the latest state per key wins. */
interface Pending {
  kept: Set<string>;
  removed: Set<string>;
  /** Too much piled up unread (a stalled stream): the next read is a snapshot instead. */
  resnapshot: boolean;
}

/** What a reader gets: either every held sequence (a snapshot) or the changes since its last read. */
export interface KvChanges {
  snapshot: boolean;
  kept: inferenceV1.HeldSequence[];
  removed: inferenceV1.SequenceRef[];
}

/**
 * The worker's KV events, like vLLM's / Dynamo's: which sessions (and conversation roots) it holds,
 * from the session cache's own kept / removed notifications. Each reader (one per router watching
 * the worker) gets a snapshot first, then only what changed since its previous read, a key's latest
 * state winning, so a reader that falls behind costs at most one entry per held key, and past twice
 * that (churn it never read) it is sent a fresh snapshot instead.
 */
export class KvEventLog implements SessionCacheListener {
  private readonly held = new Map<string, Held>();
  private readonly readers = new Set<Pending>();
  private readonly changeListeners = new Set<() => void>();

  constructor(private readonly maxPendingPerReader = 100_000) {}

  /**
   * Calls `listener` after anything was kept or removed (synchronously, once per event: coalesce
   * in the listener). Returns a function that removes it.
   */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Sequences held now. */
  get size(): number {
    return this.held.size;
  }

  kept(key: string, tokens: number, movedFrom: string | undefined, root: SessionRoot | undefined): void {
    const existing = this.held.get(key);
    // A continuation keeps its conversation's root: from the session it moved from, else its own.
    const inherited = movedFrom !== undefined && this.moved?.key === movedFrom ? this.moved.held : undefined;
    this.moved = undefined;
    const source = [inherited, existing].find((h) => h !== undefined && h.prefixKey !== '');
    const prefixKey = source?.prefixKey ?? root?.key ?? '';
    const rootTokens = source?.rootTokens ?? root?.tokens ?? 0;
    if (existing) {
      existing.tokens = tokens;
      existing.prefixKey = prefixKey;
      existing.rootTokens = rootTokens;
    } else {
      const [salt, sessionKey] = splitScopedKey(key);
      this.held.set(key, { salt, sessionKey, tokens, prefixKey, rootTokens });
    }
    for (const r of this.readers) {
      r.removed.delete(key);
      r.kept.add(key);
      this.bound(r);
    }
    this.changed();
  }

  removed(key: string, reason: SessionRemoval): void {
    const held = this.held.get(key);
    if (held === undefined) return;
    this.held.delete(key);
    // The session cache reports a move's removal just before the kept event that inherits from it.
    if (reason === 'moved') this.moved = { key, held };
    for (const r of this.readers) {
      r.kept.delete(key);
      r.removed.add(key);
      this.bound(r);
    }
    this.changed();
  }

  cleared(): void {
    this.held.clear();
    this.moved = undefined;
    for (const r of this.readers) r.resnapshot = true;
    this.changed();
  }

  /** Registers a reader; its first {@link read} is a snapshot. Returns the reader's handle. */
  subscribe(): object {
    const pending: Pending = { kept: new Set(), removed: new Set(), resnapshot: true };
    this.readers.add(pending);
    return pending;
  }

  unsubscribe(reader: object): void {
    this.readers.delete(reader as Pending);
  }

  /** Whether `reader` has anything to read. */
  hasChanges(reader: object): boolean {
    const r = reader as Pending;
    return r.resnapshot || r.kept.size > 0 || r.removed.size > 0;
  }

  /** The reader's changes since its previous read (or a snapshot), and resets them. */
  read(reader: object): KvChanges {
    const r = reader as Pending;
    if (r.resnapshot) {
      r.resnapshot = false;
      r.kept.clear();
      r.removed.clear();
      return { snapshot: true, kept: [...this.held.values()].map(toProto), removed: [] };
    }
    const kept: inferenceV1.HeldSequence[] = [];
    for (const key of r.kept) {
      const held = this.held.get(key);
      if (held) kept.push(toProto(held));
    }
    const removed = [...r.removed].map((key) => {
      const [cacheSalt, sessionKey] = splitScopedKey(key);
      return { cacheSalt, sessionKey };
    });
    r.kept.clear();
    r.removed.clear();
    return { snapshot: false, kept, removed };
  }

  // The session just moved away, for the kept event that follows it.
  private moved: { key: string; held: Held } | undefined;

  private changed(): void {
    for (const l of this.changeListeners) l();
  }

  private bound(r: Pending): void {
    if (r.kept.size + r.removed.size <= this.maxPendingPerReader) return;
    r.kept.clear();
    r.removed.clear();
    r.resnapshot = true;
  }
}

function toProto(h: Held): inferenceV1.HeldSequence {
  return {
    cacheSalt: h.salt,
    sessionKey: h.sessionKey,
    tokens: h.tokens,
    prefixKey: h.prefixKey,
    rootTokens: h.rootTokens,
  };
}

/** Splits generate-service's `scopedKey` (salt NUL key, or just key when unsalted). */
export function splitScopedKey(scoped: string): [salt: string, key: string] {
  const nul = scoped.indexOf('\u0000');
  return nul < 0 ? ['', scoped] : [scoped.slice(0, nul), scoped.slice(nul + 1)];
}
