import { safetyV1 } from '@fastloop/proto';
import type { Mask } from '../safety/redact-entries';
import type { NarrowedItem } from './narrow-item';

/**
 * The text safety scans: everything of the item the model reads (tool names included, as they
 * appear in the rendering), and for items the model does not read, every string they carry. The
 * item's author is its source: the narrowed kind says it, so safety never guesses it from a name.
 */
export function toScan(item: NarrowedItem): safetyV1.SafetyItem {
  const { lead, body } = scanParts(item);
  return {
    itemType: item.type,
    role: item.kind === 'message' ? item.role : '',
    text: joinText([...lead, body]),
    source: sourceOf(item),
  };
}

function sourceOf(item: NarrowedItem): safetyV1.ItemSource {
  switch (item.kind) {
    case 'message':
      return item.role === 'assistant' ? safetyV1.ItemSource.ITEM_SOURCE_MODEL : safetyV1.ItemSource.ITEM_SOURCE_INPUT;
    case 'reasoning':
    case 'call':
      return safetyV1.ItemSource.ITEM_SOURCE_MODEL;
    case 'output':
      return safetyV1.ItemSource.ITEM_SOURCE_TOOL;
    case 'carried':
      return item.source;
    default:
      return unreachable(item);
  }
}

/**
 * An item's scan text in two parts: what leads it (the tool's namespace and name) and the item's
 * own text, which becomes the entry's text. Redaction spans index the joined text.
 */
function scanParts(item: NarrowedItem): { lead: (string | undefined)[]; body: string } {
  switch (item.kind) {
    case 'message':
    case 'reasoning':
    case 'carried':
      return { lead: [], body: item.text };
    case 'call':
      return { lead: [item.namespace, item.name], body: item.body };
    case 'output': {
      const a = item.answers;
      // The tool's name comes from its call, which is scanned itself, unless the output names it.
      return { lead: a.by === 'name' ? [a.namespace, a.name] : [], body: item.output };
    }
    default:
      return unreachable(item);
  }
}

/** Narrowed items (the first at `offset` in the conversation) with the redaction masks of each applied. */
export function maskItems(
  narrowed: readonly NarrowedItem[],
  offset: number,
  masks: ReadonlyMap<number, readonly Mask[]>,
): NarrowedItem[] {
  return narrowed.map((item, i) => {
    const itemMasks = masks.get(offset + i);
    return itemMasks ? maskNarrowed(item, itemMasks) : item;
  });
}

/** The item with safety's redaction spans (in its scan text) masked in its own text; names stay. */
function maskNarrowed(item: NarrowedItem, masks: readonly Mask[]): NarrowedItem {
  const { lead, body } = scanParts(item);
  const leadText = joinText(lead);
  const at = leadText && body ? leadText.length + 1 : 0;
  const masked = maskText(
    body,
    masks.map((m) => ({ ...m, start: m.start - at, end: m.end - at })),
  );
  switch (item.kind) {
    case 'message':
    case 'reasoning':
    case 'carried':
      return { ...item, text: masked };
    case 'call':
      return { ...item, body: masked };
    case 'output':
      return { ...item, output: masked };
    default:
      return unreachable(item);
  }
}

/** `text` with every masked span (clipped to the text) replaced by `[redacted <rule>]`. */
export function maskText(text: string, masks: readonly Mask[]): string {
  const sorted = [...masks].sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const m of sorted) {
    const start = Math.max(at, Math.min(m.start, text.length));
    const end = Math.min(text.length, m.end);
    if (end <= start) continue;
    out += text.slice(at, start) + `[redacted ${m.ruleId}]`;
    at = end;
  }
  return out + text.slice(at);
}

function joinText(parts: readonly (string | undefined)[]): string {
  return parts.filter((p) => p !== undefined && p !== '').join('\n');
}

function unreachable(value: never): never {
  throw new Error(`Unhandled item: ${JSON.stringify(value)}`);
}
