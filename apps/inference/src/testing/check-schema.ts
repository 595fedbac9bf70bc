import type { JsonSchema } from '@fastloop/model-profiles';
import { schemaProblems } from '@fastloop/test-kit';

/**
 * @deprecated Use `schemaProblems(schema, value)` from `@fastloop/test-kit` (ajv). Kept only so that
 * branches written against the old hand-written checker still compile; it now delegates to ajv.
 */
export function checkSchema(value: unknown, schema: JsonSchema): string[] {
  return schemaProblems(schema, value);
}
