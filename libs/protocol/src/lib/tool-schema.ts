import { z } from 'zod';
import { optionalField, tolerantUnion } from './field-schemas';

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

/**
 * A group of tools under one name. A call to one of its tools carries `namespace` on its
 * `function_call` item. Members other than functions (e.g. `custom`) are carried along.
 */
export const NamespaceToolSchema = z.looseObject({
  type: z.literal('namespace'),
  name: z.string().min(1),
  description: optionalField(z.string()),
  tools: z.array(tolerantUnion([FunctionToolSchema])),
});
/** A `namespace` tool. */
export type NamespaceTool = z.infer<typeof NamespaceToolSchema>;

/**
 * Any tool. Types other than `function` and `namespace` (`custom`, `web_search`,
 * `local_shell`, `mcp`, `file_search`, …) are accepted and carried along: a model that cannot
 * call them simply does not.
 */
export const ToolSchema = tolerantUnion([FunctionToolSchema, NamespaceToolSchema]);
/** A tool as parsed. */
export type Tool = z.infer<typeof ToolSchema>;

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
