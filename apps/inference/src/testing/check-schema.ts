import type { JsonSchema } from '@fastloop/model-profiles';

/**
 * A tiny JSON Schema checker for tests: the subset the simulated accelerator claims to satisfy
 * (type, enum, const, properties/required, items, min/max, lengths, anyOf/oneOf, local $ref).
 * Returns the problems found, empty when `value` validates.
 */
export function checkSchema(value: unknown, schema: JsonSchema, root: JsonSchema = schema, path = '$'): string[] {
  if (typeof schema.$ref === 'string') {
    const target = schema.$ref
      .slice(1)
      .split('/')
      .filter(Boolean)
      .reduce<unknown>((node, part) => (node as Record<string, unknown>)?.[part], root) as JsonSchema;
    return checkSchema(value, target, root, path);
  }
  if ('const' in schema && JSON.stringify(value) !== JSON.stringify(schema.const)) return [`${path}: not the const`];
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => e === value))
    return [`${path}: ${JSON.stringify(value)} not in enum`];
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches) && !branches.some((b) => checkSchema(value, b, root, path).length === 0))
    return [`${path}: matches no branch`];
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.length > 0 && !types.some((t) => hasType(value, t)))
    return [`${path}: expected ${types.join('|')}, got ${JSON.stringify(value)}`];
  const problems: string[] = [];
  const num = (k: string) => (typeof schema[k] === 'number' ? (schema[k] as number) : undefined);
  if (typeof value === 'number') {
    if (num('minimum') !== undefined && value < num('minimum')!) problems.push(`${path}: below minimum`);
    if (num('maximum') !== undefined && value > num('maximum')!) problems.push(`${path}: above maximum`);
    if (num('exclusiveMinimum') !== undefined && value <= num('exclusiveMinimum')!)
      problems.push(`${path}: not above exclusiveMinimum`);
    if (num('exclusiveMaximum') !== undefined && value >= num('exclusiveMaximum')!)
      problems.push(`${path}: not below exclusiveMaximum`);
  }
  if (typeof value === 'string') {
    if (num('minLength') !== undefined && value.length < num('minLength')!)
      problems.push(`${path}: shorter than minLength`);
    if (num('maxLength') !== undefined && value.length > num('maxLength')!)
      problems.push(`${path}: longer than maxLength`);
  }
  if (Array.isArray(value)) {
    if (num('minItems') !== undefined && value.length < num('minItems')!) problems.push(`${path}: fewer than minItems`);
    if (num('maxItems') !== undefined && value.length > num('maxItems')!) problems.push(`${path}: more than maxItems`);
    if (schema.uniqueItems === true && new Set(value.map((v) => JSON.stringify(v))).size !== value.length)
      problems.push(`${path}: items not unique`);
    if (schema.items) value.forEach((v, i) => problems.push(...checkSchema(v, schema.items!, root, `${path}[${i}]`)));
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    for (const name of schema.required ?? []) if (!(name in obj)) problems.push(`${path}: missing required '${name}'`);
    for (const [name, sub] of Object.entries(schema.properties ?? {})) {
      if (name in obj) problems.push(...checkSchema(obj[name], sub, root, `${path}.${name}`));
    }
    if (schema.additionalProperties === false) {
      for (const name of Object.keys(obj))
        if (!(name in (schema.properties ?? {}))) problems.push(`${path}: unexpected '${name}'`);
    }
  }
  return problems;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
    default:
      return true;
  }
}
