/** The primitive type names JSON Schema allows in `type`. */
export type JsonSchemaTypeName = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object';

/** A literal value that may appear in `enum` or `default`. */
export type JsonLiteral = string | number | boolean | null;

/**
 * A loosely typed JSON Schema object, as clients send in tool `parameters`.
 *
 * Only the keywords the harmony tool rendering understands are named; anything else is kept as
 * `unknown` so that schemas from clients pass through without a cast.
 */
export interface JsonSchema {
  type?: JsonSchemaTypeName | JsonSchemaTypeName[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: JsonLiteral[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  /** OpenAPI-style nullability, rendered as `| null`. */
  nullable?: boolean;
  default?: unknown;
  additionalProperties?: boolean | JsonSchema;
  [keyword: string]: unknown;
}
