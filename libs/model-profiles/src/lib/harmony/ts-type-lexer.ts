/** One lexeme of the TypeScript-like tool definitions. */
export type TsLexeme =
  | { kind: 'punct'; text: string; start: number; end: number }
  | { kind: 'ident'; text: string; start: number; end: number }
  | { kind: 'string'; value: string; start: number; end: number }
  | { kind: 'number'; value: number; start: number; end: number }
  /** `ownLine`: nothing but blanks before it on its line (a description), else a trailing comment. */
  | { kind: 'comment'; text: string; ownLine: boolean; start: number; end: number }
  | { kind: 'eof'; start: number; end: number };

const PUNCT = ['=>', '{', '}', '(', ')', '[', ']', '<', '>', '|', ',', ':', '?', ';', '='];
const IDENT = /[A-Za-z_$][\w$]*/y;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\\n]|\\.)*"/y;

/**
 * A lexer that starts at any offset of a larger text (the parser reads one tool type at a time
 * out of the developer message) and reports where it stopped.
 */
export class TsTypeLexer {
  private lookahead: TsLexeme | undefined;
  private lastEnd: number;

  constructor(
    private readonly src: string,
    private pos: number,
  ) {
    this.lastEnd = pos;
  }

  /** Offset just past the last lexeme taken with {@link next}. */
  get offset(): number {
    return this.lastEnd;
  }

  peek(): TsLexeme {
    this.lookahead ??= this.scan();
    return this.lookahead;
  }

  next(): TsLexeme {
    const lexeme = this.peek();
    this.lookahead = undefined;
    this.lastEnd = lexeme.end;
    return lexeme;
  }

  private scan(): TsLexeme {
    while (this.pos < this.src.length && /\s/.test(this.src[this.pos])) this.pos++;
    const start = this.pos;
    if (start >= this.src.length) return { kind: 'eof', start, end: start };
    if (this.src.startsWith('//', start)) return this.scanComment(start);
    const ch = this.src[start];
    if (ch === '"') return this.scanString(start);
    if (ch === '-' || (ch >= '0' && ch <= '9')) {
      const text = this.match(NUMBER, start);
      if (text !== undefined) return { kind: 'number', value: Number(text), start, end: this.pos };
    }
    const ident = this.match(IDENT, start);
    if (ident !== undefined) return { kind: 'ident', text: ident, start, end: this.pos };
    const punct = PUNCT.find((p) => this.src.startsWith(p, start)) ?? ch;
    this.pos = start + punct.length;
    return { kind: 'punct', text: punct, start, end: this.pos };
  }

  private scanComment(start: number): TsLexeme {
    const lineStart = this.src.lastIndexOf('\n', start - 1) + 1;
    const ownLine = this.src.slice(lineStart, start).trim() === '';
    const newline = this.src.indexOf('\n', start);
    const end = newline === -1 ? this.src.length : newline;
    const raw = this.src.slice(start + 2, end);
    this.pos = end;
    // The renderer writes `// text`; strip exactly that one space so descriptions keep theirs.
    return { kind: 'comment', text: raw.startsWith(' ') ? raw.slice(1) : raw, ownLine, start, end };
  }

  private scanString(start: number): TsLexeme {
    const text = this.match(STRING, start);
    const value = text === undefined ? undefined : parseJsonString(text);
    if (value === undefined) {
      this.pos = start + 1;
      return { kind: 'punct', text: '"', start, end: this.pos };
    }
    return { kind: 'string', value, start, end: this.pos };
  }

  private match(re: RegExp, start: number): string | undefined {
    re.lastIndex = start;
    const m = re.exec(this.src);
    if (!m) return undefined;
    this.pos = start + m[0].length;
    return m[0];
  }
}

function parseJsonString(text: string): string | undefined {
  try {
    return JSON.parse(text) as string;
  } catch {
    return undefined; // e.g. an escape JSON does not know: not a string the renderer wrote
  }
}
