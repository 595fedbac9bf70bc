import { z } from 'zod';
import { knownTypes, optionalField, tolerantUnion } from './field-schemas';

/** A function tool: `parameters` is a JSON Schema object, passed to the model as-is. */
export const FunctionToolSchema = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1),
  description: optionalField(z.string()),
  parameters: optionalField(z.record(z.string(), z.unknown())),
  strict: optionalField(z.boolean()),
});
/** A `function` tool. */
export type FunctionTool = z.infer<typeof FunctionToolSchema>;

/** How a custom tool's input is constrained: free text, or a grammar (`lark` or `regex`). */
export const CustomToolFormatSchema = tolerantUnion([
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('grammar'), syntax: z.enum(['lark', 'regex']), definition: z.string() }),
]);

/** A freeform tool (Codex's `apply_patch`): the model calls it with plain text, not JSON. */
export const CustomToolSchema = z.looseObject({
  type: z.literal('custom'),
  name: z.string().min(1),
  description: optionalField(z.string()),
  format: optionalField(CustomToolFormatSchema),
});
/** A `custom` tool. */
export type CustomTool = z.infer<typeof CustomToolSchema>;

/** The `local_shell` tool: the model runs argv commands on the client's machine. */
export const LocalShellToolSchema = z.looseObject({ type: z.literal('local_shell') });

/**
 * A group of tools under one name. A call to one of its tools carries `namespace` on its
 * `function_call` (or `custom_tool_call`) item. Other member types are carried along.
 */
export const NamespaceToolSchema = z.looseObject({
  type: z.literal('namespace'),
  name: z.string().min(1),
  description: optionalField(z.string()),
  tools: z.array(tolerantUnion([FunctionToolSchema, CustomToolSchema])),
});
/** A `namespace` tool. */
export type NamespaceTool = z.infer<typeof NamespaceToolSchema>;

/**
 * Any tool. The model is offered `function`, `namespace`, `custom` and `local_shell` tools; hosted
 * tools (`web_search`, `file_search`, `mcp`, `code_interpreter`, `image_generation`,
 * `computer_use_preview`, …) are accepted and carried along: a model that cannot call them simply
 * does not.
 */
const KNOWN_TOOL_OPTIONS = [FunctionToolSchema, NamespaceToolSchema, CustomToolSchema, LocalShellToolSchema] as const;
const KNOWN_TOOL_TYPES = knownTypes(KNOWN_TOOL_OPTIONS);
export const ToolSchema = tolerantUnion(KNOWN_TOOL_OPTIONS);
/** A tool as parsed. */
export type Tool = z.infer<typeof ToolSchema>;
/** The tools a model can be offered; other tools are carried. */
export type KnownTool = z.infer<(typeof KNOWN_TOOL_OPTIONS)[number]>;
/** A member of a `namespace` tool as parsed. */
export type NamespaceMember = NamespaceTool['tools'][number];

/**
 * Narrows a tool (or namespace member) to the types a model can be offered. Needed because a
 * carried tool's `type` is any string, so `switch (tool.type)` alone cannot exclude it.
 */
export function isKnownTool(tool: Tool | NamespaceMember): tool is KnownTool {
  return KNOWN_TOOL_TYPES.has(tool.type);
}

/** Forces a call to one named function. */
export const FunctionToolChoiceSchema = z.looseObject({ type: z.literal('function'), name: z.string().min(1) });

/**
 * `none` | `auto` | `required` | `{type:"function", name}`; other objects (`allowed_tools`,
 * `custom`, hosted-tool choices) are accepted and carried.
 */
export const ToolChoiceSchema = z.union([
  z.enum(['none', 'auto', 'required']),
  tolerantUnion([FunctionToolChoiceSchema]),
]);
/** A tool choice as parsed. */
export type ToolChoice = z.infer<typeof ToolChoiceSchema>;
