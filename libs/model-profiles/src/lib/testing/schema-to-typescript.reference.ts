import type { JsonSchema, JsonSchemaTypeName } from '../json-schema';

/**
 * TEST ORACLE, not used by the library: the first, quadratic-to-cubic version of
 * `schemaToTypeScript`, kept verbatim so a property test can show the linear rewrite renders every
 * schema to the same text. Each level returned its text to its parent, which copied it again.
 */
export function referenceSchemaToTypeScript(input: JsonSchema, indent = ''): string {
  const schema = asSchema(input);
  const variants = schema.anyOf ?? schema.oneOf;
  let text: string;
  if (Array.isArray(variants) && variants.length > 0) {
    text = variants.map((v) => referenceSchemaToTypeScript(v, indent)).join(' | ');
  } else if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    text = schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  } else if (Array.isArray(schema.type)) {
    text = schema.type.map((type) => typeToTypeScript({ ...schema, type, nullable: false }, type, indent)).join(' | ');
  } else {
    text = typeToTypeScript(schema, schema.type, indent);
  }
  return schema.nullable === true && !includesNull(schema) ? `${text} | null` : text;
}

function includesNull(schema: JsonSchema): boolean {
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants) && variants.length > 0) return variants.some(includesNull);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum.includes(null);
  return schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null'));
}

function typeToTypeScript(schema: JsonSchema, type: JsonSchemaTypeName | undefined, indent: string): string {
  switch (type) {
    case 'string':
    case 'boolean':
    case 'null':
      return type;
    case 'number':
    case 'integer':
      return 'number';
    case 'array':
      return isObject(schema.items) ? `${wrapUnion(schema.items, indent)}[]` : 'Array<any>';
    case 'object':
      return objectToTypeScript(schema, indent);
    default:
      return isObject(schema.properties) ? objectToTypeScript(schema, indent) : 'any';
  }
}

function wrapUnion(items: JsonSchema, indent: string): string {
  const text = referenceSchemaToTypeScript(items, indent);
  return hasTopLevelBar(text) ? `(${text})` : text;
}

function hasTopLevelBar(text: string): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') i = skipString(text, i);
    else if (ch === '{' || ch === '(' || ch === '[') depth++;
    else if (ch === '}' || ch === ')' || ch === ']') depth--;
    else if (ch === '/' && text[i + 1] === '/') i = skipLine(text, i);
    else if (ch === '|' && depth === 0) return true;
  }
  return false;
}

function skipString(text: string, quote: number): number {
  let i = quote + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i;
}

function skipLine(text: string, from: number): number {
  const end = text.indexOf('\n', from);
  return end === -1 ? text.length : end;
}

function objectToTypeScript(schema: JsonSchema, indent: string): string {
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const lines = ['{'];
  const properties = isObject(schema.properties) ? schema.properties : {};
  for (const [key, input] of Object.entries(properties)) {
    const value = asSchema(input);
    for (const line of commentLines(value.description)) lines.push(`${indent}// ${line}`);
    const optional = required.has(key) ? '' : '?';
    const type = referenceSchemaToTypeScript(value, `${indent}    `);
    lines.push(`${indent}${renderKey(key)}${optional}: ${type},${defaultComment(value)}`);
  }
  lines.push(`${indent}}`);
  return lines.join('\n');
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asSchema(value: unknown): JsonSchema {
  return isObject(value) ? value : {};
}

function commentLines(text: unknown): string[] {
  if (typeof text !== 'string' || text === '') return [];
  return text.split(/\r?\n/);
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function renderKey(key: string): string {
  return IDENTIFIER.test(key) ? key : JSON.stringify(key);
}

function defaultComment(schema: JsonSchema): string {
  if (!('default' in schema) || schema.default === undefined) return '';
  const value = schema.default;
  const isEnum = Array.isArray(schema.enum) && schema.enum.length > 0;
  if (typeof value === 'string' && isEnum && !/[\r\n]/.test(value)) return ` // default: ${value}`;
  return ` // default: ${JSON.stringify(value)}`;
}
