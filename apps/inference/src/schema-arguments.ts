import type { JsonSchema } from '@fastloop/model-profiles';
import { createRandom, pickIndex, type Random } from '@fastloop/service-kit';

/**
 * Builds tool-call arguments that validate against a tool's JSON Schema, deterministically from
 * the conversation (the simulated accelerator's stand-in for a model filling in arguments).
 *
 * Covered: type (and type lists), enum, const, properties/required (every property is filled),
 * items with minItems/maxItems/uniqueItems, minimum/maximum (exclusive too), multipleOf, minLength/maxLength,
 * common string formats, anyOf/oneOf (first branch), allOf (merged), local `$ref`. Not covered:
 * `pattern` (strings are plain words) and `if`/`then`.
 */
export interface ArgumentSource {
  /** Seeds every choice: the same seed and schema give the same arguments. */
  seed: number;
  /** The user's request, used for free-text fields such as `query`. */
  text: string;
}

/** Nesting at which objects and arrays stop growing, so recursive schemas terminate. */
const MAX_DEPTH = 8;
/** Property names that get the user's own words rather than a couple of picked words. */
const FREE_TEXT_KEYS = /^(q|query|question|text|prompt|input|message|search|content|instructions?)$/i;

interface Context {
  random: Random;
  words: string[];
  text: string;
  root: JsonSchema;
}

/** Generates a value for `schema` (usually an object schema) from `source`. */
export function argumentsForSchema(schema: JsonSchema, source: ArgumentSource): unknown {
  const words = source.text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const ctx: Context = {
    random: createRandom(source.seed),
    words: words.length > 0 ? words : ['sim'],
    text: source.text,
    root: schema,
  };
  return valueFor(schema, ctx, 0, '');
}

function valueFor(input: JsonSchema, ctx: Context, depth: number, key: string): unknown {
  const schema = resolve(input, ctx.root, depth);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0)
    return schema.enum[pickIndex(ctx.random, schema.enum.length)];
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches) && branches.length > 0) {
    const nonNull = branches.find((b) => b.type !== 'null') ?? branches[0];
    return valueFor({ ...withoutKeys(schema, ['anyOf', 'oneOf']), ...nonNull }, ctx, depth, key);
  }
  switch (typeOf(schema)) {
    case 'object':
      return objectFor(schema, ctx, depth);
    case 'array':
      return arrayFor(schema, ctx, depth, key);
    case 'integer':
      return numberFor(schema, ctx, true);
    case 'number':
      return numberFor(schema, ctx, false);
    case 'boolean':
      return ctx.random() < 0.5;
    case 'null':
      return null;
    default:
      return stringFor(schema, ctx, key);
  }
}

/** Follows local `$ref`s and merges `allOf`, so the generators see one plain schema. */
function resolve(schema: JsonSchema, root: JsonSchema, depth: number): JsonSchema {
  let s = schema;
  for (let hops = 0; typeof s.$ref === 'string' && hops < MAX_DEPTH; hops++) {
    s = { ...withoutKeys(s, ['$ref']), ...lookupRef(root, s.$ref) };
  }
  if (Array.isArray(s.allOf) && depth < MAX_DEPTH) {
    let merged: JsonSchema = withoutKeys(s, ['allOf']);
    for (const part of s.allOf as JsonSchema[]) {
      const p = resolve(part, root, depth + 1);
      merged = {
        ...merged,
        ...p,
        properties: { ...merged.properties, ...p.properties },
        required: [...(merged.required ?? []), ...(p.required ?? [])],
      };
    }
    s = merged;
  }
  return s;
}

function lookupRef(root: JsonSchema, ref: string): JsonSchema {
  if (!ref.startsWith('#')) return {};
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined;
  }
  return node !== null && typeof node === 'object' ? (node as JsonSchema) : {};
}

function withoutKeys(schema: JsonSchema, keys: string[]): JsonSchema {
  const out: JsonSchema = { ...schema };
  for (const k of keys) delete out[k];
  return out;
}

function typeOf(schema: JsonSchema): string {
  const t = schema.type;
  if (Array.isArray(t)) return t.find((x) => x !== 'null') ?? t[0] ?? 'string';
  if (typeof t === 'string') return t;
  if (schema.properties || schema.required) return 'object';
  if (schema.items) return 'array';
  return 'string';
}

function objectFor(schema: JsonSchema, ctx: Context, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (depth >= MAX_DEPTH) return out;
  const properties = schema.properties ?? {};
  for (const [name, sub] of Object.entries(properties)) setOwn(out, name, valueFor(sub, ctx, depth + 1, name));
  // Required names without a declared schema still have to be present.
  for (const name of schema.required ?? [])
    if (!Object.hasOwn(out, name)) setOwn(out, name, valueFor({}, ctx, depth + 1, name));
  return out;
}

/**
 * Sets an own property whatever its name: `out['__proto__'] = v` would set the prototype instead
 * (and `name in out` sees inherited names such as `toString`), so such a property went missing.
 */
function setOwn(out: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
}

function arrayFor(schema: JsonSchema, ctx: Context, depth: number, key: string): unknown[] {
  const min = numberKeyword(schema, 'minItems') ?? 0;
  const max = numberKeyword(schema, 'maxItems') ?? min + 3;
  if (depth >= MAX_DEPTH) return [];
  const count = Math.min(max, Math.max(min, 1 + pickIndex(ctx.random, 2)));
  const itemSchema = schema.items && typeof schema.items === 'object' ? schema.items : {};
  const out: unknown[] = [];
  const seen = new Set<string>();
  // Bounded retries: an item schema with few distinct values cannot yield many unique items.
  for (let tries = 0; out.length < count && tries < count * 8; tries++) {
    const v = valueFor(itemSchema, ctx, depth + 1, key);
    const id = JSON.stringify(v);
    if (schema.uniqueItems === true && seen.has(id)) continue;
    seen.add(id);
    out.push(v);
  }
  return out;
}

function numberFor(schema: JsonSchema, ctx: Context, integer: boolean): number {
  let lo = numberKeyword(schema, 'minimum') ?? -Infinity;
  let hi = numberKeyword(schema, 'maximum') ?? Infinity;
  let loOpen = false;
  let hiOpen = false;
  const exLo = numberKeyword(schema, 'exclusiveMinimum');
  const exHi = numberKeyword(schema, 'exclusiveMaximum');
  if (exLo !== undefined && exLo >= lo) [lo, loOpen] = [exLo, true];
  if (exHi !== undefined && exHi <= hi) [hi, hiOpen] = [exHi, true];
  // Whole numbers where the range allows, as a model would mostly write (and valid for `integer`);
  // with multipleOf, whole multiples of it.
  const multiple = numberKeyword(schema, 'multipleOf');
  const step = multiple !== undefined && multiple > 0 ? multiple : 1;
  // Small defaults: a prompt's schema often lost its bounds in rendering (harmony drops them).
  if (lo === -Infinity) lo = hi === Infinity ? step : hi - 10 * step;
  if (hi === Infinity) hi = lo + 9 * step;
  let kLo = Math.ceil(lo / step);
  let kHi = Math.floor(hi / step);
  if (loOpen && kLo * step <= lo) kLo++;
  if (hiOpen && kHi * step >= hi) kHi--;
  if (kHi >= kLo) return (kLo + pickIndex(ctx.random, kHi - kLo + 1)) * step;
  return integer ? Math.ceil(lo) : lo + (hi - lo) / 2;
}

function stringFor(schema: JsonSchema, ctx: Context, key: string): string {
  let s = formatted(schema.format, ctx) ?? wordsFor(ctx, key);
  const min = numberKeyword(schema, 'minLength') ?? 0;
  const max = numberKeyword(schema, 'maxLength');
  while (s.length < min) s += s.length === 0 ? 'x' : ` ${s}`;
  if (max !== undefined && s.length > max) s = s.slice(0, max);
  return s;
}

function formatted(format: unknown, ctx: Context): string | undefined {
  const word = ctx.words[pickIndex(ctx.random, ctx.words.length)];
  switch (format) {
    case 'date-time':
      return '2025-01-01T12:00:00Z';
    case 'date':
      return '2025-01-01';
    case 'time':
      return '12:00:00';
    case 'email':
      return `${word}@example.com`;
    case 'uri':
    case 'url':
      return `https://example.com/${word}`;
    case 'uuid': {
      const hex = Array.from({ length: 32 }, () => pickIndex(ctx.random, 16).toString(16)).join('');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20)}`;
    }
    default:
      return undefined;
  }
}

function wordsFor(ctx: Context, key: string): string {
  if (FREE_TEXT_KEYS.test(key)) return ctx.words.slice(0, 12).join(' ');
  const n = 1 + pickIndex(ctx.random, 3);
  return Array.from({ length: n }, () => ctx.words[pickIndex(ctx.random, ctx.words.length)]).join(' ');
}

function numberKeyword(schema: JsonSchema, name: string): number | undefined {
  const v = schema[name];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}
