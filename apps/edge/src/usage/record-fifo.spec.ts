import fc from 'fast-check';
import { RecordFifo } from './record-fifo';

describe('RecordFifo', () => {
  it('behaves like a plain array queue for any sequence of push, take and put-back', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('push' as const), n: fc.integer({ min: 1, max: 1500 }) }),
      fc.record({ kind: fc.constant('take' as const), n: fc.integer({ min: 1, max: 1500 }), back: fc.nat(1500) }),
      fc.record({ kind: fc.constant('drain' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 25 }), (ops) => {
        const fifo = new RecordFifo<number>();
        let model: number[] = [];
        let next = 0;
        for (const o of ops) {
          if (o.kind === 'push') {
            for (let i = 0; i < o.n; i++) {
              fifo.push(next);
              model.push(next++);
            }
          } else if (o.kind === 'take') {
            const got = fifo.take(o.n);
            expect(got).toEqual(model.slice(0, o.n));
            model = model.slice(o.n);
            const back = got.slice(0, o.back);
            fifo.putBack(back);
            model = [...back, ...model];
          } else {
            expect(fifo.drain()).toEqual(model);
            model = [];
          }
          expect(fifo.length).toBe(model.length);
        }
        expect(fifo.drain()).toEqual(model);
      }),
      { numRuns: 100 },
    );
  });
});
