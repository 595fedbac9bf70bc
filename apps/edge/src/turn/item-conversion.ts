import type { ConversationEntry } from '@fastloop/model-profiles';
import { safetyV1 } from '@fastloop/proto';
import { ApiErrors, type InputItem } from '@fastloop/protocol';
import type { CallTarget } from './conversation-state';
import { narrowItems, unreachable, withNamespace, type NarrowContext, type NarrowedItem } from './narrow-item';
import { maskText, type Mask } from '../safety/redact-entries';

export { LOCAL_SHELL_TOOL, contentText, narrowItems, type NarrowedItem } from './narrow-item';

/** What conversion needs beyond the items: narrowing's context, and redactions by item index. */
export interface ConversionContext extends NarrowContext {
  /** Redactions by item index: spans of the item's scan text masked in what the model reads. */
  masks?: ReadonlyMap<number, readonly Mask[]>;
}

/**
 * Converts items to chat-format entries, resolving each tool output's tool from the calls seen so
 * far (`calls` is extended in place with new calls). `offset` is the items' index in the whole
 * conversation, for error params. Items the format cannot render yield no entry. `masks` (by
 * conversation index) are safety's redaction spans in each item's scan text, masked in the entry.
 */
export function itemsToEntries(
  items: readonly InputItem[],
  calls: Map<string, CallTarget>,
  offset = 0,
  ctx: ConversionContext = {},
): ConversationEntry[] {
  return convertItems(items, calls, offset, ctx).entries;
}

/**
 * {@link itemsToEntries}, keeping the narrowed items too (for the safety scan and redaction, so
 * nothing is narrowed, nor sealed reasoning opened, twice). Item by item: the first item in error
 * is the one reported, whichever step finds it.
 */
export function convertItems(
  items: readonly InputItem[],
  calls: Map<string, CallTarget>,
  offset = 0,
  ctx: ConversionContext = {},
): { narrowed: NarrowedItem[]; entries: ConversationEntry[] } {
  const narrowed: NarrowedItem[] = [];
  const entries: ConversationEntry[] = [];
  items.forEach((item, i) => {
    const [n] = narrowItems([item], offset + i, ctx);
    narrowed.push(n);
    const entry = entryOf(n, calls, offset + i, ctx.masks);
    if (entry) entries.push(entry);
  });
  return { narrowed, entries };
}

/** What safety scans of each item: one scan item per wire item, in order (findings index them). */
export function itemsToScans(
  items: readonly InputItem[],
  offset = 0,
  ctx: ConversionContext = {},
): safetyV1.SafetyItem[] {
  return narrowItems(items, offset, ctx).map(toScan);
}

/** The entries of narrowed items (see {@link itemsToEntries}); `offset` is the first one's index. */
export function entriesOf(
  narrowed: readonly NarrowedItem[],
  calls: Map<string, CallTarget>,
  offset = 0,
  masks?: ReadonlyMap<number, readonly Mask[]>,
): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  narrowed.forEach((item, i) => {
    const entry = entryOf(item, calls, offset + i, masks);
    if (entry) entries.push(entry);
  });
  return entries;
}

function entryOf(
  item: NarrowedItem,
  calls: Map<string, CallTarget>,
  index: number,
  masks: ReadonlyMap<number, readonly Mask[]> | undefined,
): ConversationEntry | undefined {
  const itemMasks = masks?.get(index);
  return toEntry(itemMasks ? maskNarrowed(item, itemMasks) : item, calls, index);
}

function toEntry(item: NarrowedItem, calls: Map<string, CallTarget>, index: number): ConversationEntry | undefined {
  switch (item.kind) {
    case 'message':
      return { kind: 'message', role: item.role, text: item.text };
    case 'reasoning':
      return { kind: 'reasoning', text: item.text };
    case 'call': {
      calls.set(item.callId, withNamespace({ name: item.name }, item.namespace));
      const entry: ConversationEntry =
        item.format === 'function'
          ? { kind: 'function_call', name: item.name, arguments: item.body, callId: item.callId }
          : { kind: 'custom_tool_call', name: item.name, input: item.body, callId: item.callId };
      return withNamespace(entry, item.namespace);
    }
    case 'output': {
      const { callId, target } = resolveOutput(item.answers, calls, index);
      const entry: ConversationEntry = { kind: 'function_call_output', name: target.name, output: item.output, callId };
      return withNamespace(entry, target.namespace);
    }
    case 'carried':
      return undefined;
    default:
      return unreachable(item);
  }
}

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

/**
 * The call a tool output answers. By `call_id` when given; coding agents (Codex CLI) also send
 * outputs with only `name`/`namespace`: those answer the latest call of that tool, and render as
 * that tool's output even when no such call is in the conversation.
 */
function resolveOutput(
  answers: Extract<NarrowedItem, { kind: 'output' }>['answers'],
  calls: Map<string, CallTarget>,
  index: number,
): { callId: string; target: CallTarget } {
  switch (answers.by) {
    case 'tool':
      return { callId: answers.callId, target: answers.target };
    case 'call_id': {
      const target = calls.get(answers.callId);
      if (!target)
        throw ApiErrors.invalidRequest(
          `No tool call found for ${answers.what} output with call_id ${answers.callId}.`,
          `input[${index}]`,
        );
      return { callId: answers.callId, target };
    }
    case 'name': {
      let found: [string, CallTarget] | undefined;
      for (const call of calls) {
        if (
          call[1].name === answers.name &&
          (answers.namespace === undefined || call[1].namespace === answers.namespace)
        )
          found = call;
      }
      return found
        ? { callId: found[0], target: found[1] }
        : { callId: '', target: withNamespace({ name: answers.name }, answers.namespace) };
    }
    default:
      return unreachable(answers);
  }
}

function joinText(parts: readonly (string | undefined)[]): string {
  return parts.filter((p) => p !== undefined && p !== '').join('\n');
}
