import { formatTail, LineTail } from './line-tail';

describe('LineTail', () => {
  it('joins lines split across chunks and reports each once complete', () => {
    const tail = new LineTail();
    const seen: string[] = [];
    tail.push('{"msg":"a"}\n{"ms', (l) => seen.push(l));
    tail.push('g":"b"}\r\nhalf', (l) => seen.push(l));
    expect(seen).toEqual(['{"msg":"a"}', '{"msg":"b"}']);
    tail.end((l) => seen.push(l));
    expect(tail.last()).toEqual(['{"msg":"a"}', '{"msg":"b"}', 'half']);
  });

  it('keeps only the most recent lines', () => {
    const tail = new LineTail(3);
    tail.push('1\n2\n3\n4\n5\n');
    expect(tail.last(10)).toEqual(['3', '4', '5']);
    expect(tail.last(2)).toEqual(['4', '5']);
    expect(tail.last(0)).toEqual([]);
  });

  it('cuts a runaway line instead of growing without bound', () => {
    const tail = new LineTail(10, 8);
    tail.push('x'.repeat(100));
    tail.push('y'.repeat(100) + '\n');
    expect(tail.last()).toEqual(['xxxxxxxx…']);
  });

  it('skips blank lines', () => {
    const tail = new LineTail();
    tail.push('\n\na\n\n');
    expect(tail.last()).toEqual(['a']);
  });
});

describe('formatTail', () => {
  it('names the service and file and indents the lines', () => {
    expect(formatTail('edge', ['one', 'two'], '/tmp/edge.log')).toBe(
      '--- last 2 line(s) of edge (/tmp/edge.log) ---\n  one\n  two',
    );
  });

  it('says so when a service wrote nothing', () => {
    expect(formatTail('router', [])).toContain('(no output)');
  });
});
