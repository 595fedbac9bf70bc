/**
 * An append-only list that successive turns of one conversation share, so a continuation adds its
 * new items without copying the history (amortised O(new)). Only the tip appends in place; a view
 * that is no longer the tip (a branch from an older response) copies its prefix once.
 */
export class AppendLog<T> {
  private readonly items: T[] = [];

  static from<T>(items: readonly T[]): LogView<T> {
    const log = new AppendLog<T>();
    log.items.push(...items);
    return new LogView(log, items.length);
  }

  /** @internal */
  appendAt(length: number, items: readonly T[]): LogView<T> {
    if (length !== this.items.length) return AppendLog.from(this.items.slice(0, length)).append(items);
    for (const item of items) this.items.push(item);
    return new LogView(this, this.items.length);
  }

  /** @internal */
  get(i: number): T {
    return this.items[i];
  }

  /** @internal */
  slice(start: number, end: number): T[] {
    return this.items.slice(start, end);
  }
}

/** An immutable prefix of an AppendLog. */
export class LogView<T> implements Iterable<T> {
  constructor(
    private readonly log: AppendLog<T>,
    readonly length: number,
  ) {}

  append(items: readonly T[]): LogView<T> {
    return items.length === 0 ? this : this.log.appendAt(this.length, items);
  }

  get(i: number): T {
    if (i < 0 || i >= this.length) throw new RangeError(`index ${i} out of range`);
    return this.log.get(i);
  }

  slice(start = 0, end = this.length): T[] {
    return this.log.slice(start, Math.min(end, this.length));
  }

  *[Symbol.iterator](): Iterator<T> {
    for (let i = 0; i < this.length; i++) yield this.log.get(i);
  }
}
