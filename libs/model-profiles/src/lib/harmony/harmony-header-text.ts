import type { FreeformFormat, RenderHeader, RenderLimits, ToolSpec } from '../model-profile';
import { RenderLimitError } from '../profile-errors';
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

/**
 * The content of the developer message, or `undefined` when there is nothing to say. With limits,
 * stops with a {@link RenderLimitError} once a tool's text or the header's (`systemChars` counts
 * the system message's) would be longer than allowed.
 */
export function developerMessageText(h: RenderHeader, limits: RenderLimits = {}, systemChars = 0): string | undefined {
  const budget = new HeaderBudget(limits, systemChars);
  const sections: string[] = [];
  if (h.instructions !== undefined && h.instructions !== '') {
    budget.take(h.instructions.length);
    sections.push('# Instructions', h.instructions);
  }
  if (h.tools.length > 0) sections.push(toolsSectionText(h.tools, limits, budget));
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

/** Counts the header's characters against `maxHeaderChars`. */
class HeaderBudget {
  private used: number;
  private readonly max: number;

  constructor(limits: RenderLimits, systemChars: number) {
    this.max = limits.maxHeaderChars ?? Number.POSITIVE_INFINITY;
    this.used = systemChars;
  }

  take(chars: number): void {
    this.used += chars;
    if (this.used > this.max) {
      throw new RenderLimitError(
        'header_rendered_chars',
        this.max,
        `The rendered instructions and tools exceed ${this.max} characters.`,
      );
    }
  }
}

interface NamespaceGroup {
  name: string;
  description?: string;
  tools: ToolSpec[];
}

/** `# Tools` and one `## namespace` block per namespace, in order of first appearance. */
export function toolsSectionText(
  tools: readonly ToolSpec[],
  limits: RenderLimits = {},
  budget = new HeaderBudget(limits, 0),
): string {
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
  return ['# Tools', ...[...groups.values()].map((group) => namespaceText(group, limits, budget))].join('\n\n');
}

function namespaceText(group: NamespaceGroup, limits: RenderLimits, budget: HeaderBudget): string {
  const lines = [`## ${group.name}\n`];
  for (const line of commentLines(group.description)) lines.push(`// ${line}`);
  lines.push(`namespace ${group.name} {\n`);
  budget.take(group.name.length + (group.description?.length ?? 0));
  for (const tool of group.tools) {
    const text = toolText(tool, limits);
    budget.take(text.length);
    lines.push(text);
  }
  lines.push(`} // namespace ${group.name}`);
  return lines.join('\n');
}

/** One tool's comment and `type` line, bounded by `maxToolChars` and `maxSchemaDepth`. */
function toolText(tool: ToolSpec, limits: RenderLimits): string {
  const maxChars = limits.maxToolChars ?? Number.POSITIVE_INFINITY;
  const lines: string[] = [];
  for (const line of commentLines(tool.description)) lines.push(`// ${line}`);
  if (tool.freeform) {
    lines.push(`// ${freeformLine(tool.freeform)}`);
    lines.push(`type ${tool.name} = (${FREEFORM_SIGNATURE}) => any;\n`);
    const text = lines.join('\n');
    if (text.length > maxChars) {
      const err = new RenderLimitError(
        'tool_rendered_chars',
        maxChars,
        `The rendered tool exceeds ${maxChars} characters.`,
      );
      err.tool = tool.namespace === undefined ? { name: tool.name } : { name: tool.name, namespace: tool.namespace };
      throw err;
    }
    return text;
  }
  try {
    const fixedChars = lines.reduce((n, line) => n + line.length + 1, 0) + tool.name.length + 20;
    if (fixedChars > maxChars) {
      throw new RenderLimitError('tool_rendered_chars', maxChars, `The rendered tool exceeds ${maxChars} characters.`);
    }
    const schemaLimits = { maxChars: maxChars - fixedChars, maxDepth: limits.maxSchemaDepth };
    const signature = tool.parameters ? `(_: ${schemaToTypeScript(tool.parameters, schemaLimits)})` : '()';
    lines.push(`type ${tool.name} = ${signature} => any;\n`);
  } catch (err) {
    if (!(err instanceof RenderLimitError)) throw err;
    // The schema was given what the comment and name left of the tool's limit: report the tool's.
    const named =
      err.limit === 'tool_rendered_chars'
        ? new RenderLimitError(err.limit, maxChars, `The rendered tool exceeds ${maxChars} characters.`)
        : err;
    named.tool = tool.namespace === undefined ? { name: tool.name } : { name: tool.name, namespace: tool.namespace };
    throw named;
  }
  return lines.join('\n');
}
