import type { GNode, Grammar } from '../engines/llamacpp/gbnf';

/**
 * Test helpers that read a grammar without llama.cpp: a RegExp for what it accepts (rules inlined
 * to a depth, deeper recursion matching nothing) and random strings it accepts.
 */

/** A RegExp (anchored, unicode) accepting what `node` accepts, with rules nested at most `depth` deep. */
export function grammarRegExp(grammar: Grammar, node: GNode = { kind: 'rule', name: 'root' }, depth = 4): RegExp {
  return new RegExp(`^(?:${source(grammar, node, depth)})$`, 'u');
}

function source(g: Grammar, node: GNode, depth: number): string {
  switch (node.kind) {
    case 'lit':
      return [...node.text].map((c) => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('');
    case 'class': {
      const ranges = node.ranges.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join('');
      return `[${node.negated ? '^' : ''}${ranges}]`;
    }
    case 'seq':
      return node.items.map((i) => `(?:${source(g, i, depth)})`).join('');
    case 'alt':
      return node.items.map((i) => `(?:${source(g, i, depth)})`).join('|');
    case 'repeat':
      return `(?:${source(g, node.item, depth)}){${node.min},${node.max ?? ''}}`;
    case 'rule': {
      if (depth <= 0) return '(?!)';
      const body = g.rules.get(node.name);
      if (!body) throw new Error(`no rule ${node.name}`);
      return `(?:${source(g, body, depth - 1)})`;
    }
  }
}

function hex(code: number): string {
  return `\\u{${code.toString(16)}}`;
}

/** Random choices for {@link sampleGrammar}. */
export interface Choices {
  /** An integer in [0, n). */
  pick(n: number): number;
}

/**
 * A random string `grammar` accepts. Past `depth` rule expansions it takes the shortest way out
 * (fewest further rule expansions), so recursive grammars terminate; `extra` bounds how far
 * beyond its minimum a repetition goes.
 */
export function sampleGrammar(grammar: Grammar, choices: Choices, depth = 6, extra = 3): string {
  const cost = ruleCosts(grammar);
  const walk = (node: GNode, budget: number): string => {
    switch (node.kind) {
      case 'lit':
        return node.text;
      case 'class':
        return String.fromCodePoint(classMember(node, choices));
      case 'seq':
        return node.items.map((i) => walk(i, budget)).join('');
      case 'alt': {
        if (budget > 0) return walk(node.items[choices.pick(node.items.length)], budget);
        const cheapest = Math.min(...node.items.map((i) => costOf(i, cost)));
        const options = node.items.filter((i) => costOf(i, cost) === cheapest);
        return walk(options[choices.pick(options.length)], budget);
      }
      case 'repeat': {
        const max = node.max ?? node.min + extra;
        const n = budget > 0 ? node.min + choices.pick(Math.min(max, node.min + extra) - node.min + 1) : node.min;
        return Array.from({ length: n }, () => walk(node.item, budget)).join('');
      }
      case 'rule':
        return walk(grammar.rules.get(node.name)!, budget - 1);
    }
  };
  return walk({ kind: 'rule', name: 'root' }, depth);
}

/** Code points a class accepts: from its ranges, or for a negated class from a few candidates. */
function classMember(node: Extract<GNode, { kind: 'class' }>, choices: Choices): number {
  const inside = (c: number) => node.ranges.some(([a, b]) => c >= a && c <= b);
  if (!node.negated) {
    const [a, b] = node.ranges[choices.pick(node.ranges.length)];
    return a + choices.pick(b - a + 1);
  }
  const candidates = [0x41, 0x7a, 0x20, 0x2f, 0xe9, 0x4e2d, 0x1f600, 0x22, 0x5c, 0x0a, 0x7f].filter((c) => !inside(c));
  return candidates[choices.pick(candidates.length)];
}

/** Fewest rule expansions each rule needs to finish (fixed point over the grammar). */
function ruleCosts(grammar: Grammar): Map<string, number> {
  const cost = new Map<string, number>([...grammar.rules.keys()].map((k) => [k, Infinity]));
  for (let changed = true; changed;) {
    changed = false;
    for (const [name, body] of grammar.rules) {
      const c = costOf(body, cost);
      if (c < cost.get(name)!) {
        cost.set(name, c);
        changed = true;
      }
    }
  }
  return cost;
}

function costOf(node: GNode, cost: Map<string, number>): number {
  switch (node.kind) {
    case 'lit':
    case 'class':
      return 0;
    case 'seq':
      return Math.max(0, ...node.items.map((i) => costOf(i, cost)));
    case 'alt':
      return Math.min(...node.items.map((i) => costOf(i, cost)));
    case 'repeat':
      return node.min === 0 ? 0 : costOf(node.item, cost);
    case 'rule':
      return 1 + (cost.get(node.name) ?? Infinity);
  }
}

/**
 * Whether `grammar` accepts all of `text`: a memoised walk of end positions (the grammars built
 * here have no left recursion), for grammars too large or too recursive for a RegExp.
 */
export function grammarAccepts(grammar: Grammar, text: string): boolean {
  const chars = [...text];
  const memo = new Map<string, ReadonlySet<number>>();
  const ends = (node: GNode, from: ReadonlySet<number>): Set<number> => {
    const out = new Set<number>();
    for (const pos of from) for (const end of endsAt(node, pos)) out.add(end);
    return out;
  };
  const endsAt = (node: GNode, pos: number): ReadonlySet<number> => {
    switch (node.kind) {
      case 'lit': {
        const lit = [...node.text];
        return lit.every((c, i) => chars[pos + i] === c) ? new Set([pos + lit.length]) : new Set();
      }
      case 'class': {
        if (pos >= chars.length) return new Set();
        const code = chars[pos].codePointAt(0)!;
        const inside = node.ranges.some(([a, b]) => code >= a && code <= b);
        return inside !== node.negated ? new Set([pos + 1]) : new Set();
      }
      case 'seq':
        return node.items.reduce<ReadonlySet<number>>((at, item) => ends(item, at), new Set([pos]));
      case 'alt':
        return new Set(node.items.flatMap((i) => [...endsAt(i, pos)]));
      case 'repeat': {
        const out = new Set<number>();
        let frontier: ReadonlySet<number> = new Set([pos]);
        for (let n = 0; ; n++) {
          if (n >= node.min) for (const p of frontier) out.add(p);
          if (node.max !== undefined && n === node.max) break;
          // Past the minimum, a position reached again with more repetitions leads nowhere new.
          const next = [...ends(node.item, frontier)].filter((p) => n + 1 < node.min || !out.has(p));
          if (next.length === 0) break;
          frontier = new Set(next);
        }
        return out;
      }
      case 'rule': {
        const key = `${node.name}@${pos}`;
        const known = memo.get(key);
        if (known) return known;
        memo.set(key, new Set());
        const result = endsAt(grammar.rules.get(node.name)!, pos);
        memo.set(key, result);
        return result;
      }
    }
  };
  return endsAt({ kind: 'rule', name: 'root' }, 0).has(chars.length);
}
