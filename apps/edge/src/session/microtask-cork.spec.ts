import { Writable } from 'node:stream';
import { microtaskCork } from './microtask-cork';

/** A stream that records each batch it is handed: one write, or a writev of what was corked. */
function batchRecorder() {
  const batches: string[][] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, cb) {
      batches.push([chunk.toString()]);
      cb();
    },
    writev(chunks, cb) {
      batches.push(chunks.map((c) => (c.chunk as Buffer).toString()));
      cb();
    },
  });
  return { stream, batches };
}

describe('microtaskCork', () => {
  it('hands the writes of one piece of synchronous work on as one batch', async () => {
    const { stream, batches } = batchRecorder();
    const cork = microtaskCork(stream);
    for (const text of ['a', 'b', 'c']) {
      cork();
      stream.write(text);
    }
    expect(batches).toEqual([]);
    await Promise.resolve();
    expect(batches).toEqual([['a', 'b', 'c']]);
    expect(stream.writableCorked).toBe(0);
  });

  it('flushes before work queued after it runs, so later work cannot hold earlier frames back', async () => {
    const { stream, batches } = batchRecorder();
    const cork = microtaskCork(stream);
    const later = Promise.resolve().then(() => {
      // Queued before the first write: runs first, and sees nothing flushed yet.
      expect(batches).toEqual([]);
    });
    cork();
    stream.write('a');
    await Promise.resolve();
    expect(batches).toEqual([['a']]);
    cork();
    stream.write('b');
    stream.write('c');
    expect(stream.writableCorked).toBe(1);
    await later;
    await Promise.resolve();
    expect(batches).toEqual([['a'], ['b', 'c']]);
  });
});
