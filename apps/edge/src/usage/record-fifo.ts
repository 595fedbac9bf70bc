/**
 * A FIFO with O(1) push and batch take, and put-back at the front for a batch that failed.
 * Taken slots are reclaimed lazily so a 100k-record backlog is not copied on every batch.
 */
export class RecordFifo<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** Removes and returns up to `n` items from the front. */
  take(n: number): T[] {
    const out = this.items.slice(this.head, this.head + n);
    this.head += out.length;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return out;
  }

  /** Returns items to the front, keeping their order (they go out first next time). */
  putBack(items: readonly T[]): void {
    if (items.length === 0) return;
    if (this.head >= items.length) {
      this.head -= items.length;
      for (let i = 0; i < items.length; i++) this.items[this.head + i] = items[i];
    } else {
      this.items = [...items, ...this.items.slice(this.head)];
      this.head = 0;
    }
  }

  /** Removes and returns everything. */
  drain(): T[] {
    const out = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return out;
  }
}
