import { turnOrder, williamsRows } from './turn-order';

function counts(rows: number[][], n: number) {
  const position = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  const follows = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (const row of rows) {
    row.forEach((m, p) => position[m][p]++);
    for (let p = 1; p < row.length; p++) follows[row[p - 1]][row[p]]++;
  }
  return { position, follows };
}

describe('williamsRows', () => {
  it('puts every mode in every position equally often and after every other mode equally often', () => {
    for (let n = 1; n <= 7; n++) {
      const rows = williamsRows(n);
      for (const row of rows) expect([...row].sort()).toEqual(Array.from({ length: n }, (_, i) => i));
      const { position, follows } = counts(rows, n);
      const perPosition = rows.length / n;
      for (const byPos of position) expect(byPos).toEqual(new Array(n).fill(perPosition));
      const perPair = rows.length / n;
      for (let a = 0; a < n; a++)
        for (let b = 0; b < n; b++) if (a !== b) expect(follows[a][b]).toBe(n === 1 ? 0 : perPair);
    }
  });
});

describe('turnOrder', () => {
  it('lets each of four modes go first in 25 of 100 turns over two 50-turn repetitions', () => {
    const modes = ['http-stateless', 'http-previous', 'ws', 'grpc'];
    const first = new Map<string, number>();
    for (let rep = 1; rep <= 2; rep++) {
      for (let turn = 1; turn <= 50; turn++) {
        const order = turnOrder(modes, rep, turn, 50);
        expect([...order].sort()).toEqual([...modes].sort());
        first.set(order[0], (first.get(order[0]) ?? 0) + 1);
      }
    }
    expect([...first.values()]).toEqual([25, 25, 25, 25]);
  });
});
