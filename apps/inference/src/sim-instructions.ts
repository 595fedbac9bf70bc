import type { ConversationEntry, JsonSchema, ParsedTool } from '@fastloop/model-profiles';
import { hashString } from '@fastloop/service-kit';
import { argumentsForSchema } from './schema-arguments';

/**
 * Explicit instructions in a user message, which the simulated model follows the way a capable model
 * would: "Run `printf hi > a.txt` then `git add a.txt` with exec_command" names an offered tool and
 * quotes one argument per call. Each quoted span becomes one call of that tool, filling only its
 * required properties (a real model leaves `workdir`, `shell`, … unset unless asked), the first
 * required string property with the span. This is what lets a real agent (Codex CLI) run a small,
 * checkable coding task against the simulator; without a named tool and a quoted span nothing changes.
 */
export function instructedCalls(tools: readonly ParsedTool[], userText: string): ConversationEntry[] | undefined {
  const spans = [...userText.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
  if (spans.length === 0) return undefined;
  const tool = namedTool(tools, userText);
  if (!tool) return undefined;
  return spans.map((span, index) => {
    const seed = hashString(`${tool.namespace}.${tool.name}#${index}:${span}`);
    return {
      kind: 'function_call',
      name: tool.name,
      ...(tool.namespace !== 'functions' ? { namespace: tool.namespace } : {}),
      arguments: JSON.stringify(requiredArguments(tool.parameters, span, seed)),
      callId: `call_sim_${seed.toString(16).padStart(8, '0')}`,
    };
  });
}

/** The offered tool the text names first (as a whole word, `name` or `namespace.name`). */
function namedTool(tools: readonly ParsedTool[], text: string): ParsedTool | undefined {
  let best: { tool: ParsedTool; at: number } | undefined;
  for (const tool of tools) {
    const at = text.search(new RegExp(`(^|[^\\w.])(${escape(tool.namespace)}\\.)?${escape(tool.name)}(?![\\w])`));
    if (at >= 0 && (!best || at < best.at)) best = { tool, at };
  }
  return best?.tool;
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
  return t === 'string' || (Array.isArray(t) && t.includes('string')) || (t === undefined && !schema.properties && !schema.items && !schema.enum);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
