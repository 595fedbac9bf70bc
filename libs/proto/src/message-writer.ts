import { BinaryWriter } from '@bufbuild/protobuf/wire';

/** What the writer below touches of BinaryWriter's state (private in its typings, plain fields in its code). */
interface WriterState {
  buffer: Uint8Array;
  viewCache: DataView;
  pos: number;
  stackPos: number[];
  uint32(value: number): unknown;
  ensureCapacity(size: number): void;
  view(): DataView;
}

/** Below this many UTF-16 units, BinaryWriter's own string() is as good (its ASCII fast path). */
const LONG_STRING = 1024;

const Base = BinaryWriter as unknown as new () => WriterState;

/** What a finished writer holds: never written to (any write grows a new buffer first). */
const EMPTY = new Uint8Array(0);

/**
 * BinaryWriter for messages that may be megabytes (a Classify call carrying a large tool output):
 * it writes the same bytes, with less memory touched. BinaryWriter reserves 3 bytes per UTF-16 unit
 * of a string (16 MB zero-filled for a 4 MB text), copies its whole old buffer on each growth, and
 * copies the result again in finish(). On hosts where fresh memory is slow (these VMs: ~3.3 ms per
 * MB touched), that was ~60 ms of event loop per 4 MB Classify (issue 17). Here a string reserves
 * its exact UTF-8 length, buffers are taken uninitialised, growth copies only what was written,
 * and finish() returns a view.
 */
class LargeMessageWriter extends Base {
  override ensureCapacity(size: number): void {
    const required = this.pos + size;
    if (required <= this.buffer.length) return;
    // A quarter more than asked absorbs the small fields after a large one without another copy.
    const length = Math.max(required + (required >> 2), this.buffer.length * 2, 128);
    // Uninitialised (every byte is written before it is read), and below 4 KiB a slice of Node's
    // shared pool: a Uint8Array of its own over 64 bytes is an ArrayBuffer allocated outside the
    // heap, ~1 µs, which was half the cost of encoding a small message (safety's answers, the
    // edge's moderation batches: 2.3 → 1.1 µs). view() below keeps fixed-width fields at the
    // slice's offset.
    const grown = Buffer.allocUnsafe(length);
    if (this.pos > 0) grown.set(this.buffer.subarray(0, this.pos));
    this.buffer = grown;
  }

  /** BinaryWriter's DataView for fixed-width fields, over the buffer's own bytes (it may be a pool slice). */
  override view(): DataView {
    const bytes = this.buffer;
    if (
      this.viewCache.buffer !== bytes.buffer ||
      this.viewCache.byteOffset !== bytes.byteOffset ||
      this.viewCache.byteLength !== bytes.byteLength
    )
      this.viewCache = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return this.viewCache;
  }

  string(value: string): this {
    if (typeof value !== 'string' || value.length < LONG_STRING) {
      (BinaryWriter.prototype as unknown as { string(this: unknown, v: string): unknown }).string.call(this, value);
      return this;
    }
    const bytes = Buffer.byteLength(value, 'utf8');
    this.uint32(bytes);
    this.ensureCapacity(bytes);
    const target = this.buffer;
    const view = Buffer.from(target.buffer, target.byteOffset, target.byteLength);
    this.pos += view.write(value, this.pos, bytes, 'utf8');
    return this;
  }

  finish(): Uint8Array {
    const written = this.buffer.subarray(0, this.pos);
    this.buffer = EMPTY;
    this.pos = 0;
    this.stackPos = [];
    return written;
  }
}

/** A writer to `encode` one message with, for its `finish()` bytes (a view: the writer is not reused). */
export function messageWriter(): BinaryWriter {
  return new LargeMessageWriter() as unknown as BinaryWriter;
}

/** `type.encode(value)` through {@link messageWriter}, as a Buffer view of the bytes (what grpc-js sends). */
export function encodeMessage<T>(type: { encode(value: T, writer?: BinaryWriter): BinaryWriter }, value: T): Buffer {
  const bytes = type.encode(value, messageWriter()).finish();
  // Every buffer this writer grows is a Buffer; a message with no field never grew one.
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
