import { BinaryWriter } from '@bufbuild/protobuf/wire';

/** What the writer below touches of BinaryWriter's state (private in its typings, plain fields in its code). */
interface WriterState {
  buffer: Uint8Array;
  pos: number;
  stackPos: number[];
  uint32(value: number): unknown;
  ensureCapacity(size: number): void;
}

/** Below this many UTF-16 units, BinaryWriter's own string() is as good (its ASCII fast path). */
const LONG_STRING = 1024;
/** Above this many bytes, a buffer is taken uninitialised: every byte of it is written before it is read. */
const LARGE_BUFFER = 64 * 1024;

const Base = BinaryWriter as unknown as new () => WriterState;

/**
 * BinaryWriter for messages that may be megabytes (a Classify call carrying a large tool output):
 * it writes the same bytes, with less memory touched. BinaryWriter reserves 3 bytes per UTF-16 unit
 * of a string (16 MB zero-filled for a 4 MB text), copies its whole old buffer on each growth, and
 * copies the result again in finish(). On hosts where fresh memory is slow (these VMs: ~3.3 ms per
 * MB touched), that was ~60 ms of event loop per 4 MB Classify (issue 17). Here a string reserves
 * its exact UTF-8 length, a large buffer is taken uninitialised, growth copies only what was
 * written, and finish() returns a view.
 */
class LargeMessageWriter extends Base {
  override ensureCapacity(size: number): void {
    const required = this.pos + size;
    if (required <= this.buffer.length) return;
    // A quarter more than asked absorbs the small fields after a large one without another copy.
    const length = Math.max(required + (required >> 2), this.buffer.length * 2, 128);
    // Never a view into a shared ArrayBuffer (Buffer.allocUnsafe's pool): BinaryWriter writes
    // doubles through a DataView it makes over the whole ArrayBuffer from offset 0.
    const grown = length > LARGE_BUFFER ? Buffer.allocUnsafeSlow(length) : new Uint8Array(length);
    if (this.pos > 0) grown.set(this.buffer.subarray(0, this.pos));
    this.buffer = grown;
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
    this.buffer = new Uint8Array(0);
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
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
