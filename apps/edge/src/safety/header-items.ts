import { safetyV1 } from '@fastloop/proto';
import type { ResponseCreateRequest } from '@fastloop/protocol';

/**
 * The request header as safety items: the instructions, then one item per tool definition with
 * everything of it the model can read — name, description, and every key and string of its
 * schema (property names, descriptions, enums, defaults, examples), nested tools included.
 * Offered tools only: with `tool_choice: "none"` the model is not shown them.
 */
export function headerSafetyItems(body: ResponseCreateRequest): safetyV1.SafetyItem[] {
  const items: safetyV1.SafetyItem[] = [];
  if (typeof body.instructions === 'string' && body.instructions.length > 0) {
    items.push({
      itemType: 'instructions',
      role: 'developer',
      text: body.instructions,
      source: safetyV1.ItemSource.ITEM_SOURCE_INPUT,
    });
  }
  const tools = body.tool_choice === 'none' ? [] : ((body.tools ?? []) as unknown[]);
  for (const tool of tools)
    items.push({
      itemType: 'tool_definition',
      role: '',
      text: flattenStrings(tool),
      source: safetyV1.ItemSource.ITEM_SOURCE_TOOL,
    });
  return items;
}

/** Every object key and string leaf of a JSON value, one per line, in document order. */
export function flattenStrings(value: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 64) return; // request validation bounds depth far below this
    if (typeof v === 'string') out.push(v);
    else if (typeof v === 'number' || typeof v === 'boolean') out.push(String(v));
    else if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        out.push(k);
        walk(x, depth + 1);
      }
    }
  };
  walk(value, 0);
  return out.join('\n');
}
