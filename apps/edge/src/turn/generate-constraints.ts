import type { inferenceV1 } from '@fastloop/proto';
import type { ResponseCreateRequest } from '@fastloop/protocol';
import type { RenderHeader } from '@fastloop/model-profiles';

/**
 * What the request forces the completion to be, for the worker (inference.proto
 * `GenerateConstraints`): `tool_choice` `required` or a named function / custom tool, and a JSON
 * `text.format`. A tool choice counts only when the model is offered tools (`header.tools`), as
 * OpenAI's models cannot call what they were not shown. Undefined when nothing is forced.
 */
export function generateConstraints(
  body: Pick<ResponseCreateRequest, 'tool_choice' | 'text'>,
  header: Pick<RenderHeader, 'tools'>,
): inferenceV1.GenerateConstraints | undefined {
  const toolChoice = header.tools.length > 0 ? toolChoiceOf(body.tool_choice) : '';
  const format = body.text?.format;
  const responseFormatJson =
    format?.type === 'json_object' || format?.type === 'json_schema' ? JSON.stringify(format) : '';
  if (toolChoice === '' && responseFormatJson === '') return undefined;
  return { toolChoice, responseFormatJson };
}

function toolChoiceOf(choice: unknown): string {
  if (choice === 'required') return 'required';
  if (typeof choice !== 'object' || choice === null) return '';
  const { type, name } = choice as { type?: unknown; name?: unknown };
  return (type === 'function' || type === 'custom') && typeof name === 'string' ? name : '';
}
