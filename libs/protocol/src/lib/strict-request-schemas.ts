import { ApiError, ApiErrors } from './api-error';
import type { ResponseCreateRequest } from './response-create-request-schema';
import { describeProblems, strictSchemaProblems } from './strict-schema';

/**
 * The 400 for the first strict schema of a request that fastloop cannot enforce (a function tool's
 * `parameters` with `strict: true`, a namespace member's, or a `json_schema` text format with
 * `strict: true`), naming every offending keyword; undefined when there is none. Non-strict
 * schemas are best effort, as in OpenAI's API: engines enforce what they can and pass them on.
 */
export function checkStrictSchemas(body: Pick<ResponseCreateRequest, 'tools' | 'text'>): ApiError | undefined {
  for (const [i, tool] of (body.tools ?? []).entries()) {
    if (tool.type === 'function') {
      const error = checkFunction(tool, `tools[${i}]`);
      if (error) return error;
    } else if (tool.type === 'namespace' && Array.isArray(tool.tools)) {
      for (const [j, member] of (tool.tools as Array<Record<string, unknown>>).entries()) {
        const error = member.type === 'function' ? checkFunction(member, `tools[${i}].tools[${j}]`) : undefined;
        if (error) return error;
      }
    }
  }
  const format = body.text?.format;
  if (format?.type === 'json_schema' && format.strict === true) {
    const problems = strictSchemaProblems(format.schema);
    if (problems.length > 0) {
      return ApiErrors.invalidRequest(
        `Invalid schema for response_format '${String(format.name)}': fastloop cannot promise output that satisfies it: ${describeProblems(problems)}. Remove these keywords or set strict to false.`,
        'text.format.schema',
        'invalid_json_schema',
      );
    }
  }
  return undefined;
}

function checkFunction(tool: Record<string, unknown>, param: string): ApiError | undefined {
  if (tool.strict !== true || tool.parameters === undefined || tool.parameters === null) return undefined;
  const problems = strictSchemaProblems(tool.parameters);
  if (problems.length === 0) return undefined;
  return ApiErrors.invalidRequest(
    `Invalid schema for function '${String(tool.name)}': fastloop cannot promise arguments that satisfy it: ${describeProblems(problems)}. Remove these keywords or set strict to false.`,
    `${param}.parameters`,
    'invalid_function_parameters',
  );
}
