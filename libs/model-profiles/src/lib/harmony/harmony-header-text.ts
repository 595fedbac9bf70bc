import type { RenderHeader, ToolSpec } from '../model-profile';
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
    const signature = tool.parameters ? `(_: ${schemaToTypeScript(tool.parameters)})` : '()';
    lines.push(`type ${tool.name} = ${signature} => any;\n`);
  }
  lines.push(`} // namespace ${group.name}`);
  return lines.join('\n');
}
