import type { JsonSchema } from '@fastloop/model-profiles';
import type { inferenceV1 } from '@fastloop/proto';
import { invalidPrompt } from './inference-errors';

/** What a request forces the completion to be (GenerateRequest.constraints), parsed once. */
export interface RequestConstraints {
  /** `required`: some offered tool; `{ name }`: that tool (`name` or `namespace.name`). */
  toolChoice?: 'required' | { name: string };
  /**
   * The answer is JSON valid against `schema` (`json_object` is the schema `{ type: "object" }`).
   * `strict` as the client sent it; engines that honour a schema honour it either way.
   */
  responseFormat?: { name: string; schema: JsonSchema; strict: boolean };
}

/** Parses the wire constraints; undefined when nothing is forced. Throws `invalid_prompt` for a malformed format. */
export function parseConstraints(wire: inferenceV1.GenerateConstraints | undefined): RequestConstraints | undefined {
  if (!wire) return undefined;
  const out: RequestConstraints = {};
  if (wire.toolChoice === 'required') out.toolChoice = 'required';
  else if (wire.toolChoice !== '') out.toolChoice = { name: wire.toolChoice };
  if (wire.responseFormatJson !== '') out.responseFormat = parseFormat(wire.responseFormatJson);
  return out.toolChoice === undefined && out.responseFormat === undefined ? undefined : out;
}

function parseFormat(json: string): RequestConstraints['responseFormat'] {
  let format: unknown;
  try {
    format = JSON.parse(json);
  } catch {
    throw invalidPrompt('constraints.response_format_json is not JSON');
  }
  const f = (typeof format === 'object' && format !== null ? format : {}) as {
    type?: unknown;
    name?: unknown;
    schema?: unknown;
    strict?: unknown;
  };
  if (f.type === 'json_object') return { name: 'json_object', schema: { type: 'object' }, strict: false };
  if (f.type === 'json_schema' && typeof f.schema === 'object' && f.schema !== null) {
    return {
      name: typeof f.name === 'string' ? f.name : 'response',
      schema: f.schema as JsonSchema,
      strict: f.strict === true,
    };
  }
  throw invalidPrompt(`constraints.response_format_json has an unsupported format: ${json.slice(0, 80)}`);
}
