import type { ConversationEntry, RenderHeader, ToolSpec } from '../model-profile';
import type { TemplateMessage, TemplateOptions } from './template-renderer';

/** The name a model sees for a tool: `ns.name` inside a namespace, else the bare name. */
export function qualifiedName(name: string, namespace?: string): string {
  return namespace ? `${namespace}.${name}` : name;
}

/** A tool as Hugging Face chat templates expect it. */
export function toolJson(tool: ToolSpec): Record<string, unknown> {
  const fn: Record<string, unknown> = { name: qualifiedName(tool.name, tool.namespace) };
  if (tool.description !== undefined) fn.description = tool.description;
  fn.parameters = tool.parameters ?? { type: 'object', properties: {} };
  return { type: 'function', function: fn };
}

/** The header's messages: a system message when there are instructions. */
export function headerMessages(h: RenderHeader): TemplateMessage[] {
  return h.instructions ? [{ role: 'system', content: h.instructions, fastloop_header: true }] : [];
}

/** Template variables the header sets: tools, tool choice, response format. */
export function headerOptions(h: RenderHeader, addGenerationPrompt: boolean): TemplateOptions {
  return {
    tools: h.tools.map(toolJson),
    toolChoice: h.toolChoice,
    responseFormat: h.responseFormat && { name: h.responseFormat.name, schema: h.responseFormat.schema },
    addGenerationPrompt,
  };
}

/** One conversation entry as a template message; reasoning has no place in these formats. */
export function entryMessage(e: ConversationEntry): TemplateMessage | undefined {
  switch (e.kind) {
    case 'message':
      return { role: e.role === 'developer' ? 'system' : e.role, content: e.text };
    case 'reasoning':
      return undefined;
    case 'function_call':
      return {
        role: 'assistant',
        content: '',
        tool_calls: [
          {
            id: e.callId,
            type: 'function',
            function: {
              name: qualifiedName(e.name, e.namespace),
              arguments: e.arguments.trim() === '' ? '{}' : e.arguments,
            },
          },
        ],
      };
    case 'custom_tool_call':
      // Chat templates know only JSON tool calls: a freeform call (Codex's apply_patch) is one whose
      // argument object carries the text, so the model still sees what it did.
      return {
        role: 'assistant',
        content: '',
        tool_calls: [
          {
            id: e.callId,
            type: 'function',
            function: { name: qualifiedName(e.name, e.namespace), arguments: JSON.stringify({ input: e.input }) },
          },
        ],
      };
    case 'function_call_output':
      return { role: 'tool', content: e.output, tool_call_id: e.callId, name: qualifiedName(e.name, e.namespace) };
    default:
      return unhandledEntry(e);
  }
}

function unhandledEntry(e: never): never {
  throw new Error(`Unhandled conversation entry: ${JSON.stringify(e)}`);
}
