import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';

// One validator for every test that checks arguments or JSON output against a schema: ajv, a full
// JSON Schema (2020-12) implementation, so no keyword a schema uses goes unchecked. Unknown keywords
// and formats are tolerated (strict: false), as OpenAI's strict mode tolerates descriptions etc.
const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
const compiled = new WeakMap<object, ValidateFunction>();

/**
 * The ways `value` fails `schema` (`<instance path>: <message>`), empty when it validates. An invalid
 * schema throws: a test must not pass because its schema could not be compiled.
 */
export function schemaProblems(schema: object, value: unknown): string[] {
  let validate = compiled.get(schema);
  if (!validate) {
    refuseProtoProperty(schema);
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map(
    (e) => `${e.instancePath || '$'}: ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`,
  );
}

/**
 * ajv drops a property named `__proto__` from `properties` while compiling (it neither checks its
 * value nor counts it as declared for `additionalProperties`), so its verdict on such a schema would
 * be wrong either way: refuse to give one, and let the test check that property by hand.
 */
function refuseProtoProperty(schema: unknown): void {
  if (Array.isArray(schema)) return schema.forEach(refuseProtoProperty);
  if (schema === null || typeof schema !== 'object') return;
  const properties = (schema as { properties?: unknown }).properties;
  if (properties && typeof properties === 'object' && Object.hasOwn(properties, '__proto__'))
    throw new Error('schemaProblems: ajv cannot check a property named `__proto__`; check it by hand');
  for (const value of Object.values(schema)) refuseProtoProperty(value);
}
