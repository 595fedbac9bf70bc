import type { ConversationEntry } from '@fastloop/model-profiles';
import type { safetyV1 } from '@fastloop/proto';
import { ApiErrors, type InputItem } from '@fastloop/protocol';
import type { CallTarget } from './conversation-state';
import { narrowItems, type NarrowContext, type NarrowedItem } from './narrow-item';
import type { Mask } from '../safety/redact-entries';
import { maskItems, toScan } from './item-scan';

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
  return convertItems(items, calls, offset, ctx);
}

/** Item by item: the first item in error is the one reported, whichever step finds it. */
function convertItems(
  items: readonly InputItem[],
  calls: Map<string, CallTarget>,
  offset = 0,
  ctx: ConversionContext = {},
): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  items.forEach((item, i) => {
    const narrowed = narrowItems([item], offset + i, ctx);
    entries.push(...entriesOf(ctx.masks ? maskItems(narrowed, offset + i, ctx.masks) : narrowed, calls, offset + i));
  });
  return entries;
}

/** What safety scans of each item: one scan item per wire item, in order (findings index them). */
export function itemsToScans(
  items: readonly InputItem[],
  offset = 0,
  ctx: ConversionContext = {},
): safetyV1.SafetyItem[] {
  return narrowItems(items, offset, ctx).map(toScan);
}

/**
 * The entries of narrowed items (see {@link itemsToEntries}; redaction masks are applied to the
 * narrowed items first, item-scan.ts); `offset` is the first one's index in the conversation.
 */
export function entriesOf(
  narrowed: readonly NarrowedItem[],
  calls: Map<string, CallTarget>,
  offset = 0,
): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  narrowed.forEach((item, i) => {
    const entry = toEntry(item, calls, offset + i);
    if (entry) entries.push(entry);
  });
  return entries;
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

function withNamespace<T extends object>(value: T, namespace: string | undefined): T & { namespace?: string } {
  return namespace === undefined ? value : { ...value, namespace };
}

function unreachable(value: never): never {
  throw new Error(`Unhandled item: ${JSON.stringify(value)}`);
}
