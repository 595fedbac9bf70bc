import type { z } from 'zod';
import { ApiError, ApiErrors } from './api-error';
import { ApiErrorCodeSchema, type ApiErrorCode } from './error-schemas';
import { FALLBACK_ISSUE } from './field-schemas';

type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

/**
 * Formats a zod path the way OpenAI names params: `input[2].content[0].text`, `metadata`.
 * Returns null for the empty path (the body itself).
 */
export function formatParam(path: Path): string | null {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out === '' ? null : out;
}

/**
 * Turns the first zod issue of a failed parse into an OpenAI-style 400, e.g.
 * `Invalid type for 'temperature': expected a number, but got a string instead.` with
 * `param: "temperature"`. `prefix` is prepended to the issue's path (`['input', 7]` when
 * validating one item of a longer list).
 */
export function issueToApiError(issue: Issue, prefix: Path = []): ApiError {
  const { issue: leaf, path } = resolveUnion(issue, prefix);
  return describe(leaf, path);
}

/**
 * A union failure carries every branch's issues. Report the branch that got furthest into
 * the value: for `input: [ {type:"function_call"} ]` that is the array branch complaining
 * about `input[0].call_id`, not the string branch complaining that `input` is not a string.
 */
function resolveUnion(issue: Issue, prefix: Path): { issue: Issue; path: Path } {
  const path = [...prefix, ...issue.path];
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return { issue, path };

  let branches = issue.errors
    .filter((branch) => branch.length > 0 && !branch.some(isFallbackIssue))
    .map((branch) => resolveUnion(branch[0] as Issue, path));
  // "No matching discriminator" beside a real complaint about `type` (it is missing, or not a
  // string) is the less helpful of the two.
  const informative = branches.filter((b) => !isNoDiscriminatorMatch(b.issue));
  if (informative.length > 0) branches = informative;
  if (branches.length === 0) return { issue, path };

  if (branches.every((b) => b.path.length === path.length && b.issue.code === 'invalid_type')) {
    // The value matched no branch's type at all: report every accepted type at once.
    const expected = branches.map((b) => (b.issue as z.core.$ZodIssueInvalidType).expected);
    return { issue: { ...branches[0]!.issue, expected: expected.join('|') } as Issue, path };
  }
  return branches.reduce((best, b) => (b.path.length > best.path.length ? b : best));
}

function isFallbackIssue(issue: Issue): boolean {
  return issue.code === 'custom' && issue.params?.[FALLBACK_ISSUE] === true;
}

function isNoDiscriminatorMatch(issue: Issue): boolean {
  return issue.code === 'invalid_union' && issue.errors.length === 0 && 'discriminator' in issue;
}

function describe(issue: Issue, path: Path): ApiError {
  const param = formatParam(path);
  const name = param === null ? 'the request body' : `'${param}'`;
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined && param !== null) {
        return ApiErrors.invalidRequest(`Missing required parameter: ${name}.`, param, 'missing_required_parameter');
      }
      return ApiErrors.invalidRequest(
        `Invalid type for ${name}: expected ${expectedTypes(issue.expected)}, but got ${describeValue(issue.input)} instead.`,
        param,
        'invalid_type',
      );
    case 'invalid_value':
      return ApiErrors.invalidRequest(
        `Invalid value: ${quote(issue.input)}. Supported values are: ${list(issue.values.map(quote))}.`,
        param,
        'invalid_value',
      );
    case 'invalid_union':
      return describeNoMatch(issue, path, param);
    case 'too_small':
    case 'too_big':
      return describeRange(issue, name, param);
    case 'custom': {
      const parsed = ApiErrorCodeSchema.safeParse(issue.params?.['code']);
      return ApiErrors.invalidRequest(
        `Invalid ${name}: ${issue.message}`,
        param,
        parsed.success ? parsed.data : 'invalid_value',
      );
    }
    case 'invalid_format':
      return ApiErrors.invalidRequest(
        `Invalid ${name}: string does not match the expected format.`,
        param,
        'invalid_value',
      );
    default:
      return ApiErrors.invalidRequest(`Invalid ${name}: ${issue.message}.`, param, 'invalid_value');
  }
}

/** A discriminated union saw a `type` it has no option for (or none at all). */
function describeNoMatch(issue: z.core.$ZodIssueInvalidUnion, path: Path, param: string | null): ApiError {
  const discriminator = (issue as { discriminator?: string }).discriminator;
  const options = (issue as { options?: unknown[] }).options;
  if (discriminator === undefined || options === undefined) {
    return ApiErrors.invalidRequest(`Invalid value for ${param === null ? 'the request body' : `'${param}'`}.`, param);
  }
  // zod puts the discriminator on the issue path already.
  const value = (issue.input as Record<string, unknown> | undefined)?.[discriminator];
  const discriminatorParam = formatParam(path.at(-1) === discriminator ? path : [...path, discriminator]);
  if (value === undefined) {
    return ApiErrors.invalidRequest(
      `Missing required parameter: '${discriminatorParam}'.`,
      discriminatorParam,
      'missing_required_parameter',
    );
  }
  return ApiErrors.invalidRequest(
    `Invalid value: ${quote(value)}. Supported values are: ${list(options.map(quote))}.`,
    discriminatorParam,
    'invalid_value',
  );
}

function describeRange(
  issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig,
  name: string,
  param: string | null,
): ApiError {
  const small = issue.code === 'too_small';
  const bound = small ? (issue as z.core.$ZodIssueTooSmall).minimum : (issue as z.core.$ZodIssueTooBig).maximum;
  const input = issue.input;
  switch (issue.origin) {
    case 'int':
    case 'number': {
      const kind = issue.origin === 'int' ? 'integer' : 'decimal';
      const op = small ? (issue.inclusive ? '>=' : '>') : issue.inclusive ? '<=' : '<';
      const code = `${kind}_${small ? 'below_min' : 'above_max'}_value` as ApiErrorCode;
      return ApiErrors.invalidRequest(
        `Invalid ${name}: ${kind} ${small ? 'below minimum' : 'above maximum'} value. Expected a value ${op} ${bound}, but got ${String(input)} instead.`,
        param,
        code,
      );
    }
    case 'string':
    case 'array': {
      const length = typeof input === 'string' || Array.isArray(input) ? input.length : undefined;
      const what = issue.origin === 'string' ? 'a string' : 'an array';
      const code = `${issue.origin}_${small ? 'below_min' : 'above_max'}_length` as ApiErrorCode;
      const got = length === 0 && issue.origin === 'string' ? 'an empty string' : `${what} with length ${length}`;
      return ApiErrors.invalidRequest(
        `Invalid ${name}: ${issue.origin} too ${small ? 'short' : 'long'}. Expected ${what} with ${small ? 'minimum' : 'maximum'} length ${bound}, but got ${got} instead.`,
        param,
        code,
      );
    }
    default:
      return ApiErrors.invalidRequest(`Invalid ${name}: ${issue.message}.`, param);
  }
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
  record: 'an object',
  null: 'null',
};

function expectedTypes(expected: string): string {
  const names = [...new Set(expected.split('|').map((type) => TYPE_NAMES[type] ?? type))];
  return names.length === 1 ? names[0]! : `one of ${list(names, 'or')}`;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return Number.isInteger(value) ? 'an integer' : 'a decimal';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

function quote(value: unknown): string {
  return `'${typeof value === 'string' ? value : JSON.stringify(value)}'`;
}

/** `'a'`, `'a' and 'b'`, `'a', 'b', and 'c'` (OpenAI's list style). */
function list(items: readonly string[], conjunction = 'and'): string {
  if (items.length <= 1) return items.join('');
  if (items.length === 2) return `${items[0]} ${conjunction} ${items[1]}`;
  return `${items.slice(0, -1).join(', ')}, ${conjunction} ${items.at(-1)}`;
}
