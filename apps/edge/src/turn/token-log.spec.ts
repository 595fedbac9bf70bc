import fc from 'fast-check';
import { TokenLog } from './token-log';
import { AppendLog } from './append-log';

describe('TokenLog', () => {
  it('gives every view exactly the tokens appended along its own path, whatever branches exist', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(100)),
        fc.array(fc.record({ parent: fc.nat(), tokens: fc.array(fc.nat(1000), { maxLength: 40 }) }), { maxLength: 30 }),
        (root, steps) => {
          const views = [TokenLog.from(root)];
          const expected = [root.slice()];
          for (const step of steps) {
            const p = step.parent % views.length;
            views.push(views[p].append(step.tokens));
            expected.push(expected[p].concat(step.tokens));
          }
          views.forEach((v, i) => expect(Array.from(v.slice())).toEqual(expected[i]));
        },
      ),
    );
  });

  it('appends in place at the tip instead of copying the history', () => {
    const a = TokenLog.from([1, 2, 3]);
    const b = a.append([4]);
    const c = b.append([5, 6]);
    expect(Array.from(c.slice())).toEqual([1, 2, 3, 4, 5, 6]);
    expect(Array.from(a.slice())).toEqual([1, 2, 3]);
    expect(c.at(5)).toBe(6);
    expect(() => c.at(6)).toThrow(RangeError);
  });
});

describe('AppendLog', () => {
  it('gives every view exactly the items appended along its own path, whatever branches exist', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string()),
        fc.array(fc.record({ parent: fc.nat(), items: fc.array(fc.string(), { maxLength: 10 }) }), { maxLength: 30 }),
        (root, steps) => {
          const views = [AppendLog.from(root)];
          const expected = [root.slice()];
          for (const step of steps) {
            const p = step.parent % views.length;
            views.push(views[p].append(step.items));
            expected.push(expected[p].concat(step.items));
          }
          views.forEach((v, i) => expect([...v]).toEqual(expected[i]));
        },
      ),
    );
  });
});
