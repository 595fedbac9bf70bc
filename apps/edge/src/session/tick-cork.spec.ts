import { Writable } from 'node:stream';
import { tickCork } from './tick-cork';

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

const nextTick = () => new Promise((r) => process.nextTick(r));

describe('tickCork', () => {
  it('hands the writes of one tick on as one batch before the next', async () => {
    const { stream, batches } = batchRecorder();
    const cork = tickCork(stream);
    for (const text of ['a', 'b', 'c']) {
      cork();
      stream.write(text);
    }
    expect(batches).toEqual([]);
    await nextTick();
    expect(batches).toEqual([['a', 'b', 'c']]);
    expect(stream.writableCorked).toBe(0);
  });

  it('corks again in a later tick', async () => {
    const { stream, batches } = batchRecorder();
    const cork = tickCork(stream);
    cork();
    stream.write('a');
    await nextTick();
    cork();
    stream.write('b');
    stream.write('c');
    expect(stream.writableCorked).toBe(1);
    await nextTick();
    expect(batches).toEqual([['a'], ['b', 'c']]);
  });
});
