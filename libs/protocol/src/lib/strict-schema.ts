/**
 * What a strict JSON Schema may use. With `strict: true` (a function tool's `parameters`, or a
 * `json_schema` text format) fastloop promises what OpenAI promises: the sampled JSON parses and
 * satisfies the schema. Engines keep that promise by sampling under a grammar built from the
 * schema, so a strict schema may use only keywords a grammar enforces; anything else is refused
 * up front, naming each keyword and where it sits, rather than silently ignored while sampling.
 *
 * Enforced while sampling: `type` (one or a list), `enum`, `const`, `properties`, `required`,
 * `additionalProperties`, `items`, `minItems`/`maxItems`, `minLength`/`maxLength`,
 * `minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum` (integer bounds on `number`; any bound
 * on `integer`), `anyOf`, local `$ref` into `$defs`/`definitions` (recursion included) and
 * OpenAPI's `nullable`. Annotations (`title`, `description`, `default`, `examples`, `$comment`,
 * `deprecated`, `readOnly`, `writeOnly`, `x-…`, `$schema`, `$id` at the root) change nothing.
 */

/** Keywords that constrain a value and that every engine's grammar enforces. */
export const ENFORCED_SCHEMA_KEYWORDS: ReadonlySet<string> = new Set([
  'type',
  'enum',
  'const',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'anyOf',
  '$ref',
  '$defs',
  'definitions',
  'nullable',
]);

/** Keywords that only describe; a value's validity does not depend on them. */
const ANNOTATIONS: ReadonlySet<string> = new Set([
  'title',
  'description',
  'default',
  'examples',
  '$comment',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$schema',
]);

const TYPE_NAMES: ReadonlySet<string> = new Set(['string', 'number', 'integer', 'boolean', 'null', 'array', 'object']);
const COUNTS = ['minItems', 'maxItems', 'minLength', 'maxLength'] as const;
/** Beyond this, a length or count bound would blow up the grammar (llama.cpp expands repetitions). */
export const MAX_SCHEMA_REPETITION = 4096;

/** One reason a strict schema cannot be enforced. */
export interface StrictSchemaProblem {
  /** Where, as a dotted path from the schema's root (`properties.city`); '' for the root. */
  path: string;
  /** The keyword at fault. */
  keyword: string;
  /** Why, for the error message. */
  reason: string;
}

/**
 * Every keyword of `schema` a grammar cannot enforce, or that makes the schema unusable (a
 * dangling `$ref`, a negative `maxLength`, an empty `enum`). Empty when the schema can be
 * promised. Visits each subschema once; `$ref` targets are checked where they are defined.
 */
export function strictSchemaProblems(schema: unknown): StrictSchemaProblem[] {
  const problems: StrictSchemaProblem[] = [];
  if (!isRecord(schema)) return [{ path: '', keyword: 'type', reason: 'a schema must be a JSON object' }];
  visit(schema, '', schema, problems, true);
  return problems;
}

function visit(
  node: Record<string, unknown>,
  path: string,
  root: Record<string, unknown>,
  out: StrictSchemaProblem[],
  isRoot = false,
): void {
  const at = (keyword: string, reason: string) => out.push({ path, keyword, reason });
  for (const [keyword, value] of Object.entries(node)) {
    if (ANNOTATIONS.has(keyword) || keyword.startsWith('x-') || (isRoot && keyword === '$id')) continue;
    if (!ENFORCED_SCHEMA_KEYWORDS.has(keyword)) {
      at(keyword, 'cannot be enforced while sampling');
      continue;
    }
    checkKeyword(keyword, value, node, path, root, out, at);
  }
  if ('anyOf' in node || '$ref' in node) {
    const siblings = Object.keys(node).filter(
      (k) =>
        k !== 'anyOf' &&
        k !== '$ref' &&
        k !== '$defs' &&
        k !== 'definitions' &&
        ENFORCED_SCHEMA_KEYWORDS.has(k) &&
        !ANNOTATIONS.has(k),
    );
    const applicator = '$ref' in node ? '$ref' : 'anyOf';
    for (const k of siblings) at(k, `cannot be combined with ${applicator} (move it into the referenced schemas)`);
    if ('anyOf' in node && '$ref' in node) at('anyOf', 'cannot be combined with $ref');
  }
  checkRanges(node, at);
}

function checkKeyword(
  keyword: string,
  value: unknown,
  node: Record<string, unknown>,
  path: string,
  root: Record<string, unknown>,
  out: StrictSchemaProblem[],
  at: (keyword: string, reason: string) => void,
): void {
  const child = (suffix: string) => (path === '' ? suffix : `${path}.${suffix}`);
  const sub = (v: unknown, p: string) => {
    if (isRecord(v)) visit(v, p, root, out);
    else if (typeof v !== 'boolean') out.push({ path: p, keyword: 'type', reason: 'a schema must be a JSON object' });
    else if (v === false) out.push({ path: p, keyword: 'false', reason: 'a schema that accepts nothing' });
  };
  switch (keyword) {
    case 'type': {
      const types = Array.isArray(value) ? value : [value];
      if (types.length === 0 || !types.every((t) => typeof t === 'string' && TYPE_NAMES.has(t)))
        at(keyword, `must name JSON types (${[...TYPE_NAMES].join(', ')})`);
      return;
    }
    case 'enum':
      if (!Array.isArray(value) || value.length === 0) at(keyword, 'must be a non-empty array');
      return;
    case 'const':
    case 'nullable':
      if (keyword === 'nullable' && typeof value !== 'boolean') at(keyword, 'must be a boolean');
      return;
    case 'properties':
    case '$defs':
    case 'definitions':
      if (!isRecord(value)) return at(keyword, 'must be an object of schemas');
      for (const [name, s] of Object.entries(value)) sub(s, child(`${keyword}.${name}`));
      return;
    case 'required':
      if (!Array.isArray(value) || !value.every((r) => typeof r === 'string')) return at(keyword, 'must list names');
      checkRequired(value as string[], node, at);
      return;
    case 'additionalProperties':
      if (typeof value !== 'boolean') sub(value, child(keyword));
      return;
    case 'items':
      if (Array.isArray(value)) return at(keyword, 'as an array (a tuple) cannot be enforced while sampling');
      sub(value, child(keyword));
      return;
    case 'anyOf':
      if (!Array.isArray(value) || value.length === 0) return at(keyword, 'must be a non-empty array of schemas');
      value.forEach((s, i) => sub(s, child(`anyOf[${i}]`)));
      return;
    case '$ref':
      if (typeof value !== 'string' || resolveRef(root, value) === undefined)
        at(keyword, `must point into this schema (#/$defs/… or #/definitions/…), got ${JSON.stringify(value)}`);
      return;
    default:
      return checkNumberKeyword(keyword, value, node, at);
  }
}

function checkNumberKeyword(
  keyword: string,
  value: unknown,
  node: Record<string, unknown>,
  at: (keyword: string, reason: string) => void,
): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) return at(keyword, 'must be a number');
  if ((COUNTS as readonly string[]).includes(keyword)) {
    if (!Number.isInteger(value) || value < 0) return at(keyword, 'must be a non-negative integer');
    if (value > MAX_SCHEMA_REPETITION) at(keyword, `above ${MAX_SCHEMA_REPETITION} cannot be enforced while sampling`);
    return;
  }
  const types = typesOf(node);
  if (!Number.isInteger(value) && !(types.length === 1 && types[0] === 'integer'))
    at(keyword, `${value} is not a whole number: only whole-number bounds are enforced on numbers`);
  if (Math.abs(value) >= 1e15) at(keyword, 'beyond ±1e15 cannot be enforced while sampling');
}

function checkRequired(required: string[], node: Record<string, unknown>, at: (k: string, r: string) => void): void {
  const declared = isRecord(node.properties) ? node.properties : {};
  if (node.additionalProperties !== false) return;
  for (const name of required)
    if (!(name in declared)) at('required', `'${name}' is required but additionalProperties is false`);
}

/** Bounds that leave nothing to sample. */
function checkRanges(node: Record<string, unknown>, at: (k: string, r: string) => void): void {
  const n = (k: string) => (typeof node[k] === 'number' ? (node[k] as number) : undefined);
  const pairs: Array<[string, string]> = [
    ['minLength', 'maxLength'],
    ['minItems', 'maxItems'],
    ['minimum', 'maximum'],
  ];
  for (const [lo, hi] of pairs) {
    const a = n(lo);
    const b = n(hi);
    if (a !== undefined && b !== undefined && a > b) at(lo, `${lo} ${a} is above ${hi} ${b}: nothing satisfies it`);
  }
}

/** The subschema a local `$ref` points to (`#`, `#/$defs/x`, any JSON pointer into the root). */
export function resolveRef(root: unknown, ref: string): Record<string, unknown> | undefined {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    node = isRecord(node) ? node[part] : undefined;
  }
  return isRecord(node) ? node : undefined;
}

/** The JSON types a schema names (`type`), empty when it names none. */
export function typesOf(schema: Record<string, unknown>): string[] {
  const t = schema.type;
  return Array.isArray(t) ? t.filter((x): x is string => typeof x === 'string') : typeof t === 'string' ? [t] : [];
}

/** `a` and `b`, each named: `'pattern' at properties.city`. */
export function describeProblems(problems: readonly StrictSchemaProblem[]): string {
  return problems
    .map((p) => `'${p.keyword}'${p.path === '' ? '' : ` at ${p.path}`} (${p.reason})`)
    .slice(0, 8)
    .join('; ');
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
