import { EventEmitter } from 'node:events';
import fc from 'fast-check';
import type { inferenceV1 } from '@fastloop/proto';
import { TokenChunkWriter, type ChunkSink } from './token-chunk-writer';

/** A call whose buffer takes `room` messages before write() says to wait; drain() empties it. */
class FakeCall extends EventEmitter implements ChunkSink {
  readonly chunks: inferenceV1.TokenChunk[] = [];
  private buffered = 0;
  constructor(public room = Infinity) {
    super();
  }
  write(message: inferenceV1.GenerateResponse): boolean {
    if (message.event?.$case === 'chunk') this.chunks.push(message.event.value);
    return ++this.buffered < this.room;
  }
  drain(): void {
    this.buffered = 0;
    this.emit('drain');
  }
}

function writerFor(call: FakeCall, maxChunkTokens: number, signal = new AbortController().signal) {
  let clock = 0;
  return new TokenChunkWriter(call, {
    maxChunkTokens,
    elapsedMs: () => ++clock,
    firstCounts: () => ({ promptTokens: 7, cachedTokens: 3 }),
    signal,
  });
}

const settled = async <T>(p: Promise<T>) => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
};

describe('TokenChunkWriter', () => {
  it('writes each engine chunk at once while the call drains, the prefill counts on the first', async () => {
    const call = new FakeCall();
    const writer = writerFor(call, 256);
    await writer.push([1]);
    expect(call.chunks).toEqual([{ tokens: [1], engineElapsedMs: 1, promptTokens: 7, cachedTokens: 3 }]);
    await writer.push([2, 3]);
    expect(call.chunks[1]).toEqual({ tokens: [2, 3], engineElapsedMs: 2, promptTokens: 0, cachedTokens: 0 });
    writer.close();
  });

  it('holds what comes while the call does not drain and sends it as one message when it does', async () => {
    const call = new FakeCall(1);
    const writer = writerFor(call, 4);
    await writer.push([1]); // written; the buffer is now full
    await writer.push([2]);
    await writer.push([3]);
    expect(call.chunks.map((c) => c.tokens)).toEqual([[1]]);
    const flushed = writer.flush();
    expect(await settled(flushed)).toBe(false);
    call.drain();
    await flushed;
    expect(call.chunks.map((c) => c.tokens)).toEqual([[1], [2, 3]]);
    writer.close();
  });

  it('makes the engine wait once it holds maxChunkTokens', async () => {
    const call = new FakeCall(1);
    const writer = writerFor(call, 3);
    await writer.push([1]);
    const pushed = writer.push([2, 3, 4]);
    expect(await settled(pushed)).toBe(false);
    call.drain();
    await pushed;
    expect(call.chunks.map((c) => c.tokens)).toEqual([[1], [2, 3, 4]]);
    writer.close();
  });

  it('stops waiting when the call is cancelled', async () => {
    const call = new FakeCall(1);
    const abort = new AbortController();
    const writer = writerFor(call, 2, abort.signal);
    await writer.push([1]);
    const pushed = writer.push([2, 3]);
    abort.abort();
    await pushed;
    await writer.flush();
    writer.close();
    writer.close();
    expect(call.listenerCount('drain')).toBe(0);
  });

  it('for any engine chunks and drain timing, sends every token once, in order, at most maxChunkTokens a message', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.nat(1000), { minLength: 1, maxLength: 40 }), { maxLength: 20 }),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.boolean(), { maxLength: 20 }),
        async (engineChunks, max, room, drains) => {
          const call = new FakeCall(room);
          const writer = writerFor(call, max);
          for (const [i, tokens] of engineChunks.entries()) {
            const pushed = writer.push(tokens);
            // The caller reads now and then; a push that must wait is released by drains.
            if (drains[i]) call.drain();
            while (!(await settled(pushed))) call.drain();
          }
          const flushed = writer.flush();
          while (!(await settled(flushed))) call.drain();
          writer.close();
          expect(call.chunks.flatMap((c) => c.tokens)).toEqual(engineChunks.flat());
          for (const c of call.chunks) expect(c.tokens.length).toBeLessThanOrEqual(max);
          expect(call.chunks.filter((c) => c.promptTokens > 0)).toHaveLength(call.chunks.length > 0 ? 1 : 0);
          expect(call.chunks[0]?.promptTokens ?? 7).toBe(7);
          // Never more messages than engine chunks, but for the splits of chunks larger than max.
          expect(call.chunks.length).toBeLessThanOrEqual(
            engineChunks.reduce((n, c) => n + Math.ceil(c.length / max), 0),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
