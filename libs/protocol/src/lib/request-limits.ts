import { ApiError } from './api-error';
import { formatParam } from './issue-to-api-error';

/**
 * Bounds on the shape of one request (`POST /v1/responses` body or WebSocket/gRPC
 * `response.create` event), checked in one linear, non-recursive walk before anything else reads
 * the request: zod, the renderer and the store all recurse or loop over what passes here, so no
 * single request can make them stall the process. Every field has a documented default
 * ({@link DEFAULT_REQUEST_LIMITS}); the edge makes each configurable.
 */
export interface RequestLimits {
  /** Items in `input`. Default 10,000. */
  maxInputItems: number;
  /** Tools in `tools`, members of `namespace` tools included. Default 512. */
  maxTools: number;
  /**
   * JSON nesting depth of a tool's `parameters` (and of `text.format.schema`): an object property
   * is two levels (`properties`, then the property's schema). Default 64.
   */
  maxSchemaDepth: number;
  /** JSON values (objects, arrays, strings, numbers, …) in one such schema. Default 10,000. */
  maxSchemaNodes: number;
  /** Length of any one string in the request, in characters. Default 10,485,760 (OpenAI's input limit). */
  maxStringChars: number;
  /** JSON nesting depth of the whole request (carried items, tools, metadata). Default 128. */
  maxJsonDepth: number;
}

/** The defaults, generous for real agents (Codex sends ~10 tools nested a few levels deep). */
export const DEFAULT_REQUEST_LIMITS: Readonly<RequestLimits> = Object.freeze({
  maxInputItems: 10_000,
  maxTools: 512,
  maxSchemaDepth: 64,
  maxSchemaNodes: 10_000,
  maxStringChars: 10 * 1024 * 1024,
  maxJsonDepth: 128,
});

/** What a value is to the walk: where schemas start and which arrays are counted. */
type Role = 'root' | 'tools' | 'tool' | 'namespaceTools' | 'text' | 'format' | 'schema' | 'other';

interface Frame {
  readonly value: object;
  readonly depth: number;
  readonly role: Role;
  readonly parent: Frame | undefined;
  readonly key: string | number;
  /** The schema this value belongs to, if any: where its node count is kept. */
  readonly schema: SchemaCount | undefined;
}

interface SchemaCount {
  readonly root: Frame;
  nodes: number;
}

/** Object keys longer than this are shown shortened in `param`, never echoed whole. */
const MAX_PARAM_KEY_CHARS = 64;

/**
 * Returns the {@link ApiError} (400) for the first bound `body` crosses, or undefined. The error's
 * `param` points at the offending field (`tools[3].parameters`, `input[7].content[0].text`) and
 * its message names the limit and its value. Linear in the size of `body`, iterative (a body
 * nested 100,000 deep is answered, not a stack overflow), and it stops at the first violation.
 */
export function checkRequestLimits(
  body: unknown,
  limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
): ApiError | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const stack: Frame[] = [{ value: body, depth: 1, role: 'root', parent: undefined, key: '', schema: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    const error = checkContainer(frame, limits);
    if (error) return error;
    const entries: [string | number, unknown][] = Array.isArray(frame.value)
      ? frame.value.map((v, i) => [i, v])
      : Object.entries(frame.value);
    for (const [key, child] of entries) {
      if (typeof key === 'string' && key.length > limits.maxStringChars)
        return stringTooLong(frame, key, key.length, limits);
      const role = childRole(frame.role, key);
      const schema = role === 'schema' ? undefined : frame.schema;
      if (schema) schema.nodes++;
      if (typeof child === 'string') {
        if (child.length > limits.maxStringChars) return stringTooLong(frame, key, child.length, limits);
      } else if (typeof child === 'object' && child !== null) {
        const next: Frame = { value: child, depth: frame.depth + 1, role, parent: frame, key, schema };
        if (role === 'schema') (next as { schema: SchemaCount }).schema = { root: next, nodes: 1 };
        stack.push(next);
      }
      if (schema && schema.nodes > limits.maxSchemaNodes) return schemaTooLarge(schema, limits);
    }
  }
  return undefined;
}

function checkContainer(frame: Frame, limits: RequestLimits): ApiError | undefined {
  if (frame.depth > limits.maxJsonDepth) {
    return tooLarge(
      frame,
      'nesting_too_deep',
      `is nested more than ${limits.maxJsonDepth} levels deep (max_json_depth)`,
    );
  }
  if (frame.schema) {
    const schemaDepth = frame.depth - frame.schema.root.depth + 1;
    if (schemaDepth > limits.maxSchemaDepth) {
      return tooLarge(
        frame.schema.root,
        'schema_too_deep',
        `is a schema nested more than ${limits.maxSchemaDepth} levels deep (max_schema_depth)`,
      );
    }
  }
  if (!Array.isArray(frame.value)) return undefined;
  const length = frame.value.length;
  if (frame.parent?.role === 'root' && frame.key === 'input' && length > limits.maxInputItems) {
    return tooLarge(
      frame,
      'array_above_max_length',
      `has ${length} items; the maximum is ${limits.maxInputItems} (max_input_items)`,
    );
  }
  if (frame.role === 'tools') {
    const count = countTools(frame.value);
    if (count > limits.maxTools)
      return tooLarge(
        frame,
        'array_above_max_length',
        `has ${count} tools; the maximum is ${limits.maxTools} (max_tools)`,
      );
  }
  return undefined;
}

/** Tools, each namespace's members counted as well as the namespace. */
function countTools(tools: readonly unknown[]): number {
  let count = tools.length;
  for (const tool of tools) {
    const members = (tool as { type?: unknown; tools?: unknown } | null)?.tools;
    if ((tool as { type?: unknown } | null)?.type === 'namespace' && Array.isArray(members)) count += members.length;
  }
  return count;
}

function childRole(parent: Role, key: string | number): Role {
  switch (parent) {
    case 'root':
      return key === 'tools' ? 'tools' : key === 'text' ? 'text' : 'other';
    case 'tools':
      return 'tool';
    case 'tool':
      return key === 'parameters' ? 'schema' : key === 'tools' ? 'namespaceTools' : 'other';
    case 'namespaceTools':
      return 'tool';
    case 'text':
      return key === 'format' ? 'format' : 'other';
    case 'format':
      return key === 'schema' ? 'schema' : 'other';
    default:
      return 'other';
  }
}

function pathOf(frame: Frame | undefined, key?: string | number): (string | number)[] {
  const path: (string | number)[] = key === undefined ? [] : [shortKey(key)];
  for (let f = frame; f && f.parent; f = f.parent) path.push(shortKey(f.key));
  return path.reverse();
}

function shortKey(key: string | number): string | number {
  return typeof key === 'string' && key.length > MAX_PARAM_KEY_CHARS ? `${key.slice(0, MAX_PARAM_KEY_CHARS)}…` : key;
}

function tooLarge(frame: Frame, code: string, what: string): ApiError {
  const param = formatParam(pathOf(frame));
  return new ApiError({
    status: 400,
    type: 'invalid_request_error',
    code,
    message: `Invalid '${param ?? 'body'}': it ${what}.`,
    param,
  });
}

function stringTooLong(frame: Frame, key: string | number, length: number, limits: RequestLimits): ApiError {
  const param = formatParam(pathOf(frame, key));
  return new ApiError({
    status: 400,
    type: 'invalid_request_error',
    code: 'string_above_max_length',
    message: `Invalid '${param}': string too long. Expected a string with maximum length ${limits.maxStringChars} (max_string_chars), but got a string with length ${length} instead.`,
    param,
  });
}

function schemaTooLarge(schema: SchemaCount, limits: RequestLimits): ApiError {
  return tooLarge(
    schema.root,
    'schema_too_large',
    `is a schema of more than ${limits.maxSchemaNodes} values (max_schema_nodes)`,
  );
}
