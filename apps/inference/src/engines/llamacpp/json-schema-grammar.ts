import { resolveRef, typesOf } from '@fastloop/protocol';
import { alt, cls, EMPTY, lit, opt, ref, repeat, seq, type GNode } from './gbnf';
import { ANY_NUMBER, integerNode, numberNode, type NumberBounds } from './number-grammar';

/** A schema no value satisfies (an empty integer range, a required property that may not exist). */
export class UnsatisfiableSchemaError extends Error {
  readonly code = 'unsatisfiable_schema';
}

type Schema = Record<string, unknown>;

/**
 * Grammar rules for JSON values that satisfy a JSON Schema, written one way only: compact (no
 * whitespace), properties in the schema's order, numbers without exponent (see number-grammar.ts),
 * strings escaped as JSON.stringify escapes them. Everything in `ENFORCED_SCHEMA_KEYWORDS`
 * (@fastloop/protocol) is enforced: types, enum/const, properties/required/additionalProperties,
 * items with minItems/maxItems, string lengths (in code points, as JSON Schema counts them),
 * numeric bounds, anyOf, local `$ref` (recursion included) and `nullable`. Other keywords, which a
 * strict schema cannot carry, are ignored: a non-strict schema is best effort (`oneOf` is sampled
 * as `anyOf`, `allOf` merged).
 *
 * One instance per schema root; several share one rule map under different `prefix`es.
 */
export class JsonSchemaGrammar {
  private counter = 0;

  constructor(
    private readonly rules: Map<string, GNode>,
    private readonly prefix: string,
    private readonly root: unknown,
  ) {}

  /** The node for values of the root schema. */
  rootValue(): GNode {
    return this.value(this.root);
  }

  private value(schema: unknown): GNode {
    if (schema === false) throw new UnsatisfiableSchemaError('a schema that accepts nothing');
    if (!isRecord(schema)) return anyValue(this.rules);
    if (typeof schema.$ref === 'string') return this.reference(schema.$ref);
    if ('const' in schema) return lit(JSON.stringify(schema.const));
    if (Array.isArray(schema.enum) && schema.enum.length > 0)
      return alt(...schema.enum.map((v) => lit(JSON.stringify(v))));
    const branches = Array.isArray(schema.anyOf)
      ? schema.anyOf
      : Array.isArray(schema.oneOf)
        ? schema.oneOf
        : undefined;
    if (branches && branches.length > 0) {
      const rest = without(schema, ['anyOf', 'oneOf']);
      return alt(...branches.map((b) => this.value(isRecord(b) ? { ...rest, ...b } : b)));
    }
    if (Array.isArray(schema.allOf)) return this.value(mergeAll(schema));
    const types = typesOf(schema);
    const named = types.length > 0 ? types : impliedTypes(schema);
    if (named.length === 0) return anyValue(this.rules);
    if (schema.nullable === true && !named.includes('null')) named.push('null');
    const options = named.flatMap((t) => {
      const node = this.typed(t, schema);
      return node ? [node] : [];
    });
    if (options.length === 0) throw new UnsatisfiableSchemaError(`no ${named.join('|')} satisfies the bounds`);
    return alt(...options);
  }

  private typed(type: string, schema: Schema): GNode | undefined {
    switch (type) {
      case 'string':
        return stringNode(this.rules, count(schema.minLength) ?? 0, count(schema.maxLength));
      case 'integer':
        return integerNode(bounds(schema));
      case 'number':
        return numberNode(wholeBounds(bounds(schema)));
      case 'boolean':
        return alt(lit('true'), lit('false'));
      case 'null':
        return lit('null');
      case 'object':
        return this.object(schema);
      case 'array':
        return this.array(schema);
      default:
        return undefined;
    }
  }

  /** A `$ref`'s target becomes a rule of its own, so recursive schemas give recursive grammars. */
  private reference(pointer: string): GNode {
    const target = resolveRef(this.root, pointer);
    if (!target) return anyValue(this.rules);
    const name = `${this.prefix}ref-${pointer.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'root'}`;
    if (!this.rules.has(name)) {
      this.rules.set(name, EMPTY); // claimed before building: a self-reference finds it
      this.rules.set(name, this.value(target));
    }
    return ref(name);
  }

  private object(schema: Schema): GNode {
    const declared = isRecord(schema.properties) ? schema.properties : {};
    const required = new Set(
      Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : [],
    );
    const extra = schema.additionalProperties;
    const props: Array<{ key: string; schema: unknown; required: boolean }> = [];
    for (const [key, sub] of Object.entries(declared)) {
      if (sub === false && !required.has(key)) continue;
      props.push({ key, schema: sub, required: required.has(key) });
    }
    for (const key of required) {
      if (key in declared) continue;
      if (extra === false) throw new UnsatisfiableSchemaError(`'${key}' is required but may not exist`);
      props.push({ key, schema: isRecord(extra) ? extra : {}, required: true });
    }
    if (props.length === 0) {
      if (extra === false) return lit('{}');
      // A map: any keys, values of additionalProperties' schema.
      const member = seq(stringNode(this.rules, 0, undefined), lit(':'), this.named(this.value(extra ?? {})));
      const m = this.named(member);
      return seq(lit('{'), opt(seq(m, repeat(seq(lit(','), m), 0))), lit('}'));
    }
    // Members in schema order; an optional one may be left out. first_i: members from i on with
    // none written yet; after_i: members from i on, each behind a comma.
    const id = this.nextId('obj');
    const members = props.map((p) => seq(lit(`${JSON.stringify(p.key)}:`), this.named(this.value(p.schema))));
    const after = (i: number) => `${id}-after-${i}`;
    const first = (i: number) => `${id}-first-${i}`;
    this.rules.set(after(props.length), EMPTY);
    this.rules.set(first(props.length), EMPTY);
    for (let i = props.length - 1; i >= 0; i--) {
      const comma = seq(lit(','), members[i]);
      this.rules.set(after(i), seq(props[i].required ? comma : opt(comma), ref(after(i + 1))));
      const taken = seq(members[i], ref(after(i + 1)));
      this.rules.set(first(i), props[i].required ? taken : alt(taken, ref(first(i + 1))));
    }
    return seq(lit('{'), ref(first(0)), lit('}'));
  }

  private array(schema: Schema): GNode {
    const min = count(schema.minItems) ?? 0;
    const max = count(schema.maxItems);
    if (max !== undefined && max < min) throw new UnsatisfiableSchemaError('minItems above maxItems');
    if (max === 0) return lit('[]');
    const item = this.named(this.value(isRecord(schema.items) ? schema.items : {}));
    const more = (n: number) => repeat(seq(lit(','), item), n, max === undefined ? undefined : max - 1);
    const body = min === 0 ? opt(seq(item, more(0))) : seq(item, more(min - 1));
    return seq(lit('['), body, lit(']'));
  }

  /** `node` as a rule reference when it is more than a literal, so repeating it repeats a name. */
  private named(node: GNode): GNode {
    if (node.kind === 'rule' || node.kind === 'lit') return node;
    const name = this.nextId('v');
    this.rules.set(name, node);
    return ref(name);
  }

  private nextId(kind: string): string {
    return `${this.prefix}${kind}${this.counter++}`;
  }
}

/** A JSON string of `min..max` characters (code points; an escape is one). */
function stringNode(rules: Map<string, GNode>, min: number, max: number | undefined): GNode {
  if (max !== undefined && max < min) throw new UnsatisfiableSchemaError('minLength above maxLength');
  if (!rules.has('json-char')) {
    const hex = cls([
      [0x30, 0x39],
      [0x61, 0x66],
    ]);
    // Unescaped: anything but `"`, `\` and control characters; escaped as JSON.stringify escapes.
    rules.set(
      'json-char',
      alt(
        cls(
          [
            [0x00, 0x1f],
            [0x22, 0x22],
            [0x5c, 0x5c],
          ],
          true,
        ),
        seq(
          lit('\\'),
          alt(
            cls([...'"\\bfnrt'].map((c) => [c.charCodeAt(0), c.charCodeAt(0)] as const)),
            seq(lit('u00'), cls([[0x30, 0x31]]), hex),
          ),
        ),
      ),
    );
  }
  return seq(lit('"'), repeat(ref('json-char'), min, max), lit('"'));
}

/** Any JSON value, compact (the rules are added to `rules` once). */
export function anyValue(rules: Map<string, GNode>): GNode {
  if (!rules.has('json-value')) {
    const string = stringNode(rules, 0, undefined);
    rules.set('json-string', string);
    rules.set(
      'json-value',
      alt(
        ref('json-object'),
        ref('json-array'),
        ref('json-string'),
        ANY_NUMBER,
        lit('true'),
        lit('false'),
        lit('null'),
      ),
    );
    const member = seq(ref('json-string'), lit(':'), ref('json-value'));
    rules.set('json-object', seq(lit('{'), opt(seq(member, repeat(seq(lit(','), member), 0))), lit('}')));
    rules.set(
      'json-array',
      seq(lit('['), opt(seq(ref('json-value'), repeat(seq(lit(','), ref('json-value')), 0))), lit(']')),
    );
  }
  return ref('json-value');
}

/** Types a schema without `type` constrains through its keywords (none: any value). */
function impliedTypes(schema: Schema): string[] {
  const has = (...keys: string[]) => keys.some((k) => k in schema);
  const types: string[] = [];
  if (has('properties', 'required', 'additionalProperties')) types.push('object');
  if (has('items', 'minItems', 'maxItems')) types.push('array');
  if (has('minLength', 'maxLength')) types.push('string');
  if (has('minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum')) types.push('number');
  return types;
}

function bounds(schema: Schema): NumberBounds {
  const n = (k: string) =>
    typeof schema[k] === 'number' && Number.isFinite(schema[k]) ? (schema[k] as number) : undefined;
  return {
    minimum: n('minimum'),
    maximum: n('maximum'),
    exclusiveMinimum: n('exclusiveMinimum'),
    exclusiveMaximum: n('exclusiveMaximum'),
  };
}

/**
 * Whole-number bounds for a `number`: a fractional bound (which a strict schema cannot carry)
 * narrows to the next whole number inside it, so what is sampled still satisfies it.
 */
function wholeBounds(b: NumberBounds): NumberBounds {
  const out: NumberBounds = {};
  const lo = [
    b.minimum !== undefined ? Math.ceil(b.minimum) : undefined,
    b.exclusiveMinimum !== undefined && !Number.isInteger(b.exclusiveMinimum)
      ? Math.ceil(b.exclusiveMinimum)
      : undefined,
  ].filter((v): v is number => v !== undefined);
  const hi = [
    b.maximum !== undefined ? Math.floor(b.maximum) : undefined,
    b.exclusiveMaximum !== undefined && !Number.isInteger(b.exclusiveMaximum)
      ? Math.floor(b.exclusiveMaximum)
      : undefined,
  ].filter((v): v is number => v !== undefined);
  if (lo.length > 0) out.minimum = Math.max(...lo);
  if (hi.length > 0) out.maximum = Math.min(...hi);
  if (b.exclusiveMinimum !== undefined && Number.isInteger(b.exclusiveMinimum))
    out.exclusiveMinimum = b.exclusiveMinimum;
  if (b.exclusiveMaximum !== undefined && Number.isInteger(b.exclusiveMaximum))
    out.exclusiveMaximum = b.exclusiveMaximum;
  return out;
}

function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
}

/** `allOf`'s parts merged into one schema (best effort for non-strict schemas). */
function mergeAll(schema: Schema): Schema {
  let merged: Schema = without(schema, ['allOf']);
  for (const part of schema.allOf as unknown[]) {
    if (!isRecord(part)) continue;
    merged = {
      ...merged,
      ...part,
      properties: {
        ...(isRecord(merged.properties) ? merged.properties : {}),
        ...(isRecord(part.properties) ? part.properties : {}),
      },
      required: [
        ...(Array.isArray(merged.required) ? merged.required : []),
        ...(Array.isArray(part.required) ? part.required : []),
      ],
    };
  }
  return merged;
}

function without(schema: Schema, keys: string[]): Schema {
  const out = { ...schema };
  for (const k of keys) delete out[k];
  return out;
}

function isRecord(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
