import type { ConversationEntry, JsonSchema, ParsedTool } from '@fastloop/model-profiles';
import { hashString } from '@fastloop/service-kit';
import { argumentsForSchema } from '../../schema-arguments';

/**
 * Explicit instructions in a user message, which the simulated model follows the way a capable model
 * would: "Run `printf hi > a.txt` then `git add a.txt` with exec_command" names an offered tool and
 * quotes one argument per call. Each quoted span (inline `…` or a fenced ``` block) becomes one call,
 * in order, of the tool named after it (before the next span), else of the tool named last before
 * it, else of the next tool named ("run `a` then `b` with exec_command"). A function tool gets only its required properties (a real model leaves `workdir`, `shell`, …
 * unset unless asked), the first required string one set to the span; a custom (freeform) tool such
 * as Codex's `apply_patch` gets the span as its input. This is what lets a real agent (Codex CLI)
 * run a small, checkable coding task against the simulator; without a named tool and a quoted span
 * nothing changes.
 */
export function instructedCalls(tools: readonly ParsedTool[], userText: string): ConversationEntry[] | undefined {
  const steps = instructedSteps(tools, userText);
  return steps.length > 0 ? steps.map((step) => instructedCall(step.tool, step.span, step.index)) : undefined;
}

/** A fenced ``` block (its body) or an inline `span`. */
export const QUOTED_SPANS = /```[^\n`]*\n([\s\S]*?)```|`([^`\n]+)`/g;

/** One instructed call: the tool, and the quoted span it gets (`fenced` when it was a ``` block). */
export interface InstructedStep {
  tool: ParsedTool;
  span: string;
  fenced: boolean;
  /** The span's place among all quoted spans (seeds the call id). */
  index: number;
}

/** The calls `userText` instructs, in order (the rules above); empty without a named tool and a quoted span. */
export function instructedSteps(tools: readonly ParsedTool[], userText: string): InstructedStep[] {
  const spans = [...userText.matchAll(QUOTED_SPANS)].map((m) => ({
    text: m[1] ?? m[2],
    fenced: m[1] !== undefined,
    start: m.index,
    end: m.index + m[0].length,
  }));
  if (spans.length === 0) return [];
  // A tool name inside a quoted span is part of what to run, not an instruction.
  const mentions = toolMentions(tools, userText).filter((m) => !spans.some((s) => m.at >= s.start && m.at < s.end));
  if (mentions.length === 0) return [];
  const steps: InstructedStep[] = [];
  spans.forEach((span, index) => {
    const nextStart = spans[index + 1]?.start ?? userText.length;
    const after = mentions.find((m) => m.at >= span.end && m.at < nextStart);
    const before = [...mentions].reverse().find((m) => m.at < span.start);
    const later = mentions.find((m) => m.at >= span.end);
    const tool = (after ?? before ?? later)?.tool;
    if (tool) steps.push({ tool, span: span.text, fenced: span.fenced, index });
  });
  return steps;
}

function instructedCall(tool: ParsedTool, span: string, index: number): ConversationEntry {
  const seed = hashString(`${tool.namespace}.${tool.name}#${index}:${span}`);
  const namespace = tool.namespace !== 'functions' ? { namespace: tool.namespace } : {};
  const callId = `call_sim_${seed.toString(16).padStart(8, '0')}`;
  if (tool.freeform) return { kind: 'custom_tool_call', name: tool.name, ...namespace, input: span, callId };
  return {
    kind: 'function_call',
    name: tool.name,
    ...namespace,
    arguments: JSON.stringify(requiredArguments(tool.parameters, span, seed)),
    callId,
  };
}

/** Where the text names offered tools (as whole words, `name` or `namespace.name`), in order. */
function toolMentions(tools: readonly ParsedTool[], text: string): { tool: ParsedTool; at: number }[] {
  const mentions: { tool: ParsedTool; at: number }[] = [];
  for (const tool of tools) {
    const re = new RegExp(`(^|[^\\w.\`])(${escape(tool.namespace)}\\.)?${escape(tool.name)}(?![\\w\`])`, 'g');
    for (const m of text.matchAll(re)) mentions.push({ tool, at: m.index + m[1].length });
  }
  return mentions.sort((a, b) => a.at - b.at);
}

/** Only the required properties, the first required string one set to `span`; valid against `schema`. */
function requiredArguments(schema: JsonSchema, span: string, seed: number): Record<string, unknown> {
  const required = schema.required ?? [];
  const properties: Record<string, JsonSchema> = {};
  for (const name of required) properties[name] = schema.properties?.[name] ?? {};
  const args = argumentsForSchema({ ...schema, properties, required }, { seed, text: span }) as Record<string, unknown>;
  const target = required.find((name) => isStringSchema(properties[name]));
  if (target) args[target] = span;
  return args;
}

function isStringSchema(schema: JsonSchema): boolean {
  const t = schema.type;
  return (
    t === 'string' ||
    (Array.isArray(t) && t.includes('string')) ||
    (t === undefined && !schema.properties && !schema.items && !schema.enum)
  );
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
