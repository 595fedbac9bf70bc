import type { FreeformFormat, RenderHeader, ToolSpec } from '../model-profile';
import { commentLines, schemaToTypeScript } from './schema-to-typescript';

/** The namespace of tools that have none, as harmony names it. */
export const DEFAULT_TOOL_NAMESPACE = 'functions';

// No "Current date:" line (harmony has one): a date would make the same request render
// differently from one day to the next and defeat prefix caching.
const MODEL_IDENTITY = 'You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06';
const CHANNELS = '# Valid channels: analysis, commentary, final. Channel must be included for every message.';
const TOOL_CHANNEL = "Calls to these tools must go to the commentary channel: 'functions'.";

/** The content of the system message. */
export function systemMessageText(h: RenderHeader): string {
  const channels = h.tools.length > 0 ? `${CHANNELS}\n${TOOL_CHANNEL}` : CHANNELS;
  return `${MODEL_IDENTITY}\n\nReasoning: ${h.reasoningEffort ?? 'medium'}\n\n${channels}`;
}

/** The content of the developer message, or `undefined` when there is nothing to say. */
export function developerMessageText(h: RenderHeader): string | undefined {
  const sections: string[] = [];
  if (h.instructions !== undefined && h.instructions !== '') sections.push('# Instructions', h.instructions);
  if (h.tools.length > 0) sections.push(toolsSectionText(h.tools));
  return sections.length > 0 ? sections.join('\n\n') : undefined;
}

/** What stands for a custom tool's parameters: it takes plain text, not a JSON object. */
export const FREEFORM_SIGNATURE = 'FREEFORM';
/** The comment line right above a custom tool's signature (its last comment line). */
export const FREEFORM_TEXT_LINE = 'Call with plain text, not JSON.';
/** Starts the last comment line of a grammar-constrained custom tool; the grammar follows as a JSON string. */
export const FREEFORM_GRAMMAR_PREFIX = 'Call with plain text matching this grammar, not JSON. Grammar ';

/**
 * One line, so that the description above it (any number of lines) and the format can always be
 * told apart again: the grammar, which may span many lines, is written as a JSON string.
 */
function freeformLine(format: FreeformFormat): string {
  if (format.type === 'text') return FREEFORM_TEXT_LINE;
  return `${FREEFORM_GRAMMAR_PREFIX}(${format.syntax}): ${JSON.stringify(format.definition)}`;
}

interface NamespaceGroup {
  name: string;
  description?: string;
  tools: ToolSpec[];
}

/** `# Tools` and one `## namespace` block per namespace, in order of first appearance. */
export function toolsSectionText(tools: readonly ToolSpec[]): string {
  const groups = new Map<string, NamespaceGroup>();
  for (const tool of tools) {
    const name = tool.namespace ?? DEFAULT_TOOL_NAMESPACE;
    let group = groups.get(name);
    if (!group) {
      group = { name, tools: [] };
      groups.set(name, group);
    }
    group.description ??= tool.namespaceDescription;
    group.tools.push(tool);
  }
  return ['# Tools', ...[...groups.values()].map(namespaceText)].join('\n\n');
}

function namespaceText(group: NamespaceGroup): string {
  const lines = [`## ${group.name}\n`];
  for (const line of commentLines(group.description)) lines.push(`// ${line}`);
  lines.push(`namespace ${group.name} {\n`);
  for (const tool of group.tools) {
    for (const line of commentLines(tool.description)) lines.push(`// ${line}`);
    if (tool.freeform) {
      lines.push(`// ${freeformLine(tool.freeform)}`);
      lines.push(`type ${tool.name} = (${FREEFORM_SIGNATURE}) => any;\n`);
      continue;
    }
    const signature = tool.parameters ? `(_: ${schemaToTypeScript(tool.parameters)})` : '()';
    lines.push(`type ${tool.name} = ${signature} => any;\n`);
  }
  lines.push(`} // namespace ${group.name}`);
  return lines.join('\n');
}
