import type { FreeformFormat, JsonSchema, RenderHeader, ToolSpec } from '@fastloop/model-profiles';
import { isKnownTool, type CustomTool, type NamespaceMember, type Tool, type ToolChoice } from '@fastloop/protocol';
import { LOCAL_SHELL_TOOL } from './narrow-item';

/** What a header renders from: a request body, or the Response object a stored conversation kept. */
export interface HeaderSource {
  tools?: readonly Tool[];
  tool_choice?: ToolChoice;
  instructions?: string | null;
  reasoning?: { effort?: string | null } | null;
  text?: { format?: { type?: string; name?: string; schema?: unknown; strict?: boolean | null } } | null;
}

/**
 * The chat-format header of a request: instructions, the tools the model can call (functions,
 * namespaces, custom tools, local_shell), the effort, and what the request forces: the one reading
 * of `tool_choice` and `text.format`, which the worker's generation constraints are derived from
 * too (see generate-constraints.ts). Hosted tools are carried, not offered.
 */
export function toHeader(body: HeaderSource): RenderHeader {
  // tool_choice "none": the model is not shown the tools, so it cannot call them.
  const offered = body.tool_choice === 'none' ? [] : (body.tools ?? []);
  const tools = offered.flatMap(toolSpecs);
  const effort = body.reasoning?.effort;
  const header: RenderHeader = {
    instructions: body.instructions ?? undefined,
    tools,
    reasoningEffort: effort === 'low' || effort === 'medium' || effort === 'high' ? effort : undefined,
  };
  // A tool choice counts only when the model is offered tools, as OpenAI's models cannot call
  // what they were not shown.
  const toolChoice = tools.length > 0 ? forcedTool(body.tool_choice) : undefined;
  if (toolChoice !== undefined) header.toolChoice = toolChoice;
  const responseFormat = forcedFormat(body.text?.format);
  if (responseFormat !== undefined) header.responseFormat = responseFormat;
  return header;
}

/** `required`, or a named function or custom tool; undefined when the model may answer in text. */
function forcedTool(choice: ToolChoice | undefined): RenderHeader['toolChoice'] {
  if (choice === 'required') return 'required';
  if (typeof choice !== 'object' || choice === null) return undefined;
  const { type, name } = choice as { type?: unknown; name?: unknown };
  return (type === 'function' || type === 'custom') && typeof name === 'string' ? { name } : undefined;
}

/**
 * A JSON `text.format`: `json_schema` with its schema, or `json_object` as the schema
 * `{"type": "object"}` (as the worker reads it); undefined for plain text.
 */
function forcedFormat(format: NonNullable<HeaderSource['text']>['format']): RenderHeader['responseFormat'] {
  if (format?.type === 'json_object') return { name: 'json_object', schema: { type: 'object' } };
  if (format?.type !== 'json_schema' || typeof format.schema !== 'object' || format.schema === null) return undefined;
  const name = typeof format.name === 'string' ? format.name : 'response';
  const strict = format.strict === true ? { strict: true } : {};
  return { name, schema: format.schema as JsonSchema, ...strict };
}

/** The tool specs of one wire tool: none for hosted tools the model cannot call. */
function toolSpecs(tool: Tool | NamespaceMember): ToolSpec[] {
  if (!isKnownTool(tool)) return [];
  switch (tool.type) {
    case 'function':
      return [withoutUndefined({ name: tool.name, description: tool.description, parameters: tool.parameters })];
    case 'custom':
      return [withoutUndefined({ name: tool.name, description: tool.description, freeform: freeformOf(tool.format) })];
    case 'local_shell':
      return [LOCAL_SHELL_SPEC];
    case 'namespace':
      return tool.tools
        .flatMap(toolSpecs)
        .map((spec) => withoutUndefined({ ...spec, namespace: tool.name, namespaceDescription: tool.description }));
    default:
      return unreachableTool(tool);
  }
}

function freeformOf(format: CustomTool['format']): FreeformFormat {
  if (
    format?.type === 'grammar' &&
    'definition' in format &&
    typeof format.definition === 'string' &&
    typeof format.syntax === 'string'
  ) {
    return { type: 'grammar', syntax: format.syntax, definition: format.definition };
  }
  return { type: 'text' };
}

function unreachableTool(tool: never): never {
  throw new Error(`Unhandled tool: ${JSON.stringify(tool)}`);
}

/** The `local_shell` tool as the model sees it: the fields of a `local_shell_call` action. */
const LOCAL_SHELL_SPEC: ToolSpec = {
  name: LOCAL_SHELL_TOOL,
  description: "Runs a command on the user's machine and returns its output.",
  parameters: {
    type: 'object',
    properties: {
      command: { type: 'array', items: { type: 'string' }, description: 'The command and its arguments (argv).' },
      working_directory: { type: 'string' },
      timeout_ms: { type: 'number' },
      env: { type: 'object', properties: {} },
    },
    required: ['command'],
  },
};

/** Drops undefined-valued keys: the header key hashes the specs' JSON, and equal tools must compare equal. */
function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
