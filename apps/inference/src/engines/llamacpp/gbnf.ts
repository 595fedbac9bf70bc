/**
 * A small grammar AST that prints as llama.cpp's GBNF. Grammars are built as nodes (so tests can
 * also walk them: sample strings from them, or turn them into a RegExp) and printed once.
 */
export type GNode =
  | { readonly kind: 'lit'; readonly text: string }
  /** Code point ranges, inclusive; `negated`: any code point outside them. */
  | { readonly kind: 'class'; readonly ranges: ReadonlyArray<readonly [number, number]>; readonly negated: boolean }
  | { readonly kind: 'seq'; readonly items: readonly GNode[] }
  | { readonly kind: 'alt'; readonly items: readonly GNode[] }
  | { readonly kind: 'repeat'; readonly item: GNode; readonly min: number; readonly max: number | undefined }
  | { readonly kind: 'rule'; readonly name: string };

/** Named rules; `root` is where sampling starts. */
export interface Grammar {
  readonly rules: ReadonlyMap<string, GNode>;
}

export const lit = (text: string): GNode => ({ kind: 'lit', text });
export const cls = (ranges: ReadonlyArray<readonly [number, number]>, negated = false): GNode => ({
  kind: 'class',
  ranges,
  negated,
});
export const ref = (name: string): GNode => ({ kind: 'rule', name });
export const EMPTY: GNode = { kind: 'seq', items: [] };

/** Items in order; nested sequences are flattened and adjacent literals joined. */
export function seq(...items: GNode[]): GNode {
  const out: GNode[] = [];
  for (const item of items.flatMap((i) => (i.kind === 'seq' ? i.items : [i]))) {
    const last = out[out.length - 1];
    if (item.kind === 'lit' && item.text === '') continue;
    if (item.kind === 'lit' && last?.kind === 'lit') out[out.length - 1] = lit(last.text + item.text);
    else out.push(item);
  }
  return out.length === 1 ? out[0] : { kind: 'seq', items: out };
}

/** One of the items (at least one); nested alternatives are flattened and duplicates dropped. */
export function alt(...items: GNode[]): GNode {
  const out: GNode[] = [];
  const seen = new Set<string>();
  for (const item of items.flatMap((i) => (i.kind === 'alt' ? i.items : [i]))) {
    const key = JSON.stringify(item);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(item);
  }
  if (out.length === 0) throw new Error('an alternative needs at least one item');
  return out.length === 1 ? out[0] : { kind: 'alt', items: out };
}

/** `item` repeated min..max times (max undefined: unbounded). */
export function repeat(item: GNode, min: number, max?: number): GNode {
  if (max !== undefined && max < min) throw new Error(`repetition ${min}..${max} is empty`);
  if (max === 0) return EMPTY;
  if (min === 1 && max === 1) return item;
  return { kind: 'repeat', item, min, max };
}

export const opt = (item: GNode): GNode => repeat(item, 0, 1);

/** Prints `grammar` as GBNF, `root` first. */
export function toGbnf(grammar: Grammar): string {
  const lines: string[] = [];
  const root = grammar.rules.get('root');
  if (!root) throw new Error('a grammar needs a root rule');
  lines.push(`root ::= ${print(root, false)}`);
  for (const [name, node] of grammar.rules) if (name !== 'root') lines.push(`${name} ::= ${print(node, false)}`);
  return lines.join('\n');
}

function print(node: GNode, nested: boolean): string {
  switch (node.kind) {
    case 'lit':
      return `"${[...node.text].map((c) => escapeChar(c, '"')).join('')}"`;
    case 'class':
      return `[${node.negated ? '^' : ''}${node.ranges.map(([a, b]) => (a === b ? classChar(a) : `${classChar(a)}-${classChar(b)}`)).join('')}]`;
    case 'rule':
      return node.name;
    case 'seq':
      if (node.items.length === 0) return '""';
      return wrap(node.items.map((i) => print(i, true)).join(' '), nested && node.items.length > 1);
    case 'alt':
      return wrap(node.items.map((i) => print(i, false)).join(' | '), nested);
    case 'repeat': {
      const inner = print(node.item, true);
      const item = node.item.kind === 'repeat' ? `(${inner})` : inner;
      if (node.min === 0 && node.max === 1) return `${item}?`;
      if (node.min === 0 && node.max === undefined) return `${item}*`;
      if (node.min === 1 && node.max === undefined) return `${item}+`;
      if (node.max === node.min) return `${item}{${node.min}}`;
      return `${item}{${node.min},${node.max ?? ''}}`;
    }
  }
}

function wrap(text: string, parens: boolean): string {
  return parens ? `(${text})` : text;
}

// llama.cpp's parser knows only \\ \" \[ \] (and \x \u \U \t \r \n) as escapes: `^` and `-`, which mean
// something inside a class, are written in hex there.
function classChar(code: number): string {
  const c = String.fromCodePoint(code);
  return c === '^' || c === '-' ? `\\x${code.toString(16)}` : escapeChar(c, ']');
}

/** Printable ASCII as itself (but `\\` and `special`); everything else as a \x / \u / \U escape. */
function escapeChar(c: string, special: string): string {
  const code = c.codePointAt(0)!;
  if (c === '\\' || special.includes(c)) return `\\${c}`;
  if (code >= 0x20 && code < 0x7f) return c;
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code < 0x10000) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\U${code.toString(16).padStart(8, '0')}`;
}
