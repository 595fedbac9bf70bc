import { safetyV1 } from '@fastloop/proto';
import type { ResponseCreateRequest } from '@fastloop/protocol';

/**
 * The request header as safety items: the instructions, then one item per tool definition with
 * everything of it the model can read — name, description, and every key and string of its
 * schema (property names, descriptions, enums, defaults, examples), nested tools included.
 * Offered tools only: with `tool_choice: "none"` the model is not shown them. Last, a JSON
 * `text.format` (its name, description and schema): it reaches the engine as a constraint and, for
 * chat templates that render it (GGUF models), the prompt.
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
  const format = textFormatItem(body);
  if (format) items.push(format);
  return items;
}

/** The header item type of a `json_schema` `text.format`. */
export const TEXT_FORMAT_ITEM = 'text_format';

function textFormatItem(body: ResponseCreateRequest): safetyV1.SafetyItem | undefined {
  const format = body.text?.format;
  if (format?.type !== 'json_schema') return undefined;
  const { name, description, schema } = format;
  return {
    itemType: TEXT_FORMAT_ITEM,
    role: 'developer',
    text: flattenStrings({ name, description, schema }),
    source: safetyV1.ItemSource.ITEM_SOURCE_INPUT,
  };
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
