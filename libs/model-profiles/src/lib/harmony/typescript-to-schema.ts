import type { JsonLiteral, JsonSchema, JsonSchemaTypeName } from '../json-schema';
import { TsTypeLexer } from './ts-type-lexer';

/** Thrown inside the parser; callers turn it into a `PromptParseError` or try another reading. */
export class TsSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at offset ${offset}`);
  }
}

/** A union member before members are merged: literals become one `enum`. */
type TsType = { literal: string | number | boolean } | { schema: JsonSchema };

const PRIMITIVES: ReadonlySet<string> = new Set(['string', 'number', 'boolean', 'null']);

/**
 * Parses a tool signature as `schemaToTypeScript` renders it, starting at `offset` in `src`:
 * `() => any;` or `(_: TYPE) => any;`. Returns the arguments schema (an empty object schema for
 * `()`) and the offset just past the `;`. Throws {@link TsSyntaxError}.
 */
export function parseToolSignature(src: string, offset: number): { parameters: JsonSchema; end: number } {
  const parser = new TsTypeParser(new TsTypeLexer(src, offset));
  const parameters = parser.signature();
  return { parameters, end: parser.offset };
}

/** Parses one type expression (a whole `src`) back into a JSON schema. Throws {@link TsSyntaxError}. */
export function typeScriptToSchema(src: string): JsonSchema {
  const parser = new TsTypeParser(new TsTypeLexer(src, 0));
  const schema = parser.union();
  parser.expectEnd();
  return schema;
}

class TsTypeParser {
  constructor(private readonly lexer: TsTypeLexer) {}

  get offset(): number {
    return this.lexer.offset;
  }

  signature(): JsonSchema {
    this.expect('(');
    let parameters: JsonSchema = { type: 'object', properties: {} };
    if (!this.accept(')')) {
      this.expectIdent('_');
      this.expect(':');
      parameters = this.union();
      this.expect(')');
    }
    this.expect('=>');
    this.expectIdent('any');
    this.expect(';');
    return parameters;
  }

  union(): JsonSchema {
    const members = [this.postfix()];
    while (this.accept('|')) members.push(this.postfix());
    return mergeUnion(members);
  }

  expectEnd(): void {
    this.skipComments();
    const lexeme = this.lexer.next();
    if (lexeme.kind !== 'eof') throw new TsSyntaxError('expected end of type', lexeme.start);
  }

  private postfix(): TsType {
    let type = this.primary();
    while (this.accept('[')) {
      this.expect(']');
      type = { schema: { type: 'array', items: toSchema(type) } };
    }
    return type;
  }

  private primary(): TsType {
    // harmony may put an object's own description before its `{`; the property comment has it.
    this.skipComments();
    const lexeme = this.lexer.next();
    if (lexeme.kind === 'string' || lexeme.kind === 'number') return { literal: lexeme.value };
    if (lexeme.kind === 'punct' && lexeme.text === '(') {
      const inner = this.union();
      this.expect(')');
      return { schema: inner };
    }
    if (lexeme.kind === 'punct' && lexeme.text === '{') return { schema: this.objectBody() };
    if (lexeme.kind !== 'ident') throw new TsSyntaxError('expected a type', lexeme.start);
    if (lexeme.text === 'true' || lexeme.text === 'false') return { literal: lexeme.text === 'true' };
    if (PRIMITIVES.has(lexeme.text)) return { schema: { type: lexeme.text as JsonSchemaTypeName } };
    if (lexeme.text === 'Array') {
      this.expect('<');
      this.expectIdent('any');
      this.expect('>');
      return { schema: { type: 'array' } };
    }
    return { schema: {} }; // `any` (or a name we do not know): accepts anything
  }

  private objectBody(): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (;;) {
      const description = this.leadingComments();
      if (this.accept('}')) break;
      const key = this.propertyKey();
      const optional = this.accept('?');
      this.expect(':');
      const schema = this.union();
      this.expect(',');
      if (description.length > 0) schema.description = description.join('\n');
      const trailing = this.lexer.peek();
      if (trailing.kind === 'comment' && !trailing.ownLine) {
        this.lexer.next();
        if (trailing.text.startsWith('default: ')) schema.default = parseDefault(trailing.text.slice(9), schema);
      }
      // defineProperty: a key named `__proto__` must become a property, not a prototype.
      Object.defineProperty(properties, key, { value: schema, enumerable: true, writable: true, configurable: true });
      if (!optional) required.push(key);
    }
    return required.length > 0 ? { type: 'object', properties, required } : { type: 'object', properties };
  }

  private propertyKey(): string {
    const lexeme = this.lexer.next();
    if (lexeme.kind === 'ident') return lexeme.text;
    if (lexeme.kind === 'string') return lexeme.value;
    throw new TsSyntaxError('expected a property name', lexeme.start);
  }

  private leadingComments(): string[] {
    const lines: string[] = [];
    for (let next = this.lexer.peek(); next.kind === 'comment'; next = this.lexer.peek()) {
      this.lexer.next();
      if (next.ownLine) lines.push(next.text);
    }
    return lines;
  }

  private skipComments(): void {
    while (this.lexer.peek().kind === 'comment') this.lexer.next();
  }

  private accept(punct: string): boolean {
    const next = this.lexer.peek();
    if (next.kind !== 'punct' || next.text !== punct) return false;
    this.lexer.next();
    return true;
  }

  private expect(punct: string): void {
    if (!this.accept(punct)) throw new TsSyntaxError(`expected '${punct}'`, this.lexer.peek().start);
  }

  private expectIdent(name: string): void {
    const next = this.lexer.next();
    if (next.kind !== 'ident' || next.text !== name) throw new TsSyntaxError(`expected '${name}'`, next.start);
  }
}

function toSchema(type: TsType): JsonSchema {
  return 'schema' in type ? type.schema : literalsSchema([type.literal]);
}

/**
 * Merges union members the way the renderer split them: literals back into one `enum`, plain
 * primitive types into a `type` list, anything else into `anyOf`.
 */
function mergeUnion(members: TsType[]): JsonSchema {
  if (members.length === 1) return toSchema(members[0]);
  const literals: (string | number | boolean)[] = [];
  const schemas: JsonSchema[] = [];
  for (const member of members) {
    if ('literal' in member) literals.push(member.literal);
    else schemas.push(member.schema);
  }
  if (literals.length === 0 && schemas.every(isPlainPrimitive)) {
    return { type: [...new Set(schemas.map((s) => s.type as JsonSchemaTypeName))] };
  }
  const variants = literals.length > 0 ? [literalsSchema(literals), ...schemas] : schemas;
  return variants.length === 1 ? variants[0] : { anyOf: variants };
}

function isPlainPrimitive(schema: JsonSchema): boolean {
  const keys = Object.keys(schema);
  return keys.length === 1 && typeof schema.type === 'string' && PRIMITIVES.has(schema.type);
}

function literalsSchema(values: (string | number | boolean)[]): JsonSchema {
  const kinds = new Set(values.map((v) => typeof v));
  const only = kinds.size === 1 ? [...kinds][0] : undefined;
  const type = only === 'string' ? 'string' : only === 'number' ? 'number' : only === 'boolean' ? 'boolean' : undefined;
  return type ? { type, enum: values } : { enum: values };
}

/** harmony writes enum string defaults bare and every other default as JSON. */
function parseDefault(raw: string, schema: JsonSchema): unknown {
  if (Array.isArray(schema.enum) && schema.enum.includes(raw as JsonLiteral)) return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}
