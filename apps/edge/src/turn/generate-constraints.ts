import type { inferenceV1 } from '@fastloop/proto';
import type { RenderHeader } from '@fastloop/model-profiles';

/**
 * What the request forces the completion to be, for the worker (inference.proto
 * `GenerateConstraints`), read off the rendered header: the header is the one reading of
 * `tool_choice` and `text.format` (render-header.ts), so what the model is told (in formats that
 * carry it) and what the worker enforces cannot disagree. Undefined when nothing is forced.
 */
export function generateConstraints(
  header: Pick<RenderHeader, 'toolChoice' | 'responseFormat'>,
): inferenceV1.GenerateConstraints | undefined {
  const choice = header.toolChoice;
  const toolChoice = choice === undefined ? '' : choice === 'required' ? 'required' : choice.name;
  const format = header.responseFormat;
  // The worker reads a json_object format and the schema {"type":"object"} the same way.
  const responseFormatJson =
    format === undefined
      ? ''
      : JSON.stringify({
          type: 'json_schema',
          name: format.name,
          schema: format.schema,
          strict: format.strict === true,
        });
  if (toolChoice === '' && responseFormatJson === '') return undefined;
  return { toolChoice, responseFormatJson };
}
