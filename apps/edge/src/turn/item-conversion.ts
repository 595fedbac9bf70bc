import type { ConversationEntry } from '@fastloop/model-profiles';
import type { safetyV1 } from '@fastloop/proto';
import {
  ApiErrors,
  isKnownInputItem,
  type CarriedInputItem,
  type ContentPart,
  type InputItem,
  type KnownInputItem,
} from '@fastloop/protocol';
import type { CallTarget } from './conversation-state';
import { maskText, type Mask } from '../safety/redact-entries';

/** The tool a `local_shell_call` calls, as the model is offered it (see toHeader). */
export const LOCAL_SHELL_TOOL = 'local_shell';

/**
 * A wire item narrowed once to what matters downstream. Both the model's entry ({@link toEntry})
 * and the safety scan ({@link toScan}) are built from this, and only from this, so the text the
 * model reads is always the text safety scans.
 */
type NarrowedItem =
  | { kind: 'message'; role: 'system' | 'developer' | 'user' | 'assistant'; text: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'call'; format: 'function' | 'custom'; callId: string; name: string; namespace?: string; body: string }
  | { kind: 'output'; answers: OutputAnswers; output: string }
  /** An item this chat format has no rendering for: carried and stored, scanned, not read by the model. */
  | { kind: 'carried'; text: string };

/** How a tool output finds the call it answers. */
type OutputAnswers =
  | { by: 'call_id'; callId: string; what: 'function call' | 'custom tool call' }
  | { by: 'name'; name: string; namespace?: string }
  | { by: 'tool'; callId: string; target: CallTarget };

/**
 * What conversion needs beyond the items. `openReasoning` opens a reasoning item's
 * `encrypted_content` (sealed for the caller's tenant) to the text the model wrote, throwing an
 * ApiError for a blob that does not open; without it the item's `content` / `summary` is read.
 */
export interface ConversionContext {
  openReasoning?: (encrypted: string, param: string) => string;
  /** Redactions by item index: spans of the item's scan text masked in what the model reads. */
  masks?: ReadonlyMap<number, readonly Mask[]>;
}

/** Narrows a validated wire item. Exhaustive: a new known item type does not compile until handled here. */
function narrow(item: InputItem, index: number, ctx: ConversionContext): NarrowedItem {
  if (!isKnownInputItem(item)) return { kind: 'carried', text: carriedText(item) };
  return narrowKnown(item, index, ctx);
}

function narrowKnown(item: KnownInputItem, index: number, ctx: ConversionContext): NarrowedItem {
  switch (item.type) {
    case 'message':
      return { kind: 'message', role: item.role, text: contentText(item.content) };
    case 'reasoning':
      // Sealed reasoning is what the model wrote, whatever the client kept of content and summary.
      if (item.encrypted_content !== undefined && ctx.openReasoning) {
        return {
          kind: 'reasoning',
          text: ctx.openReasoning(item.encrypted_content, `input[${index}].encrypted_content`),
        };
      }
      return { kind: 'reasoning', text: reasoningText(item.content ?? [], item.summary) };
    case 'function_call':
      return withNamespace(
        { kind: 'call', format: 'function', callId: item.call_id, name: item.name, body: item.arguments },
        item.namespace,
      );
    case 'custom_tool_call':
      return withNamespace(
        { kind: 'call', format: 'custom', callId: item.call_id, name: item.name, body: item.input },
        item.namespace,
      );
    case 'local_shell_call': {
      const { type: _type, ...action } = item.action;
      return {
        kind: 'call',
        format: 'function',
        callId: item.call_id,
        name: LOCAL_SHELL_TOOL,
        body: JSON.stringify(action),
      };
    }
    case 'function_call_output':
    case 'custom_tool_call_output': {
      const output = contentText(item.output);
      const what = item.type === 'function_call_output' ? 'function call' : 'custom tool call';
      if (item.call_id !== undefined)
        return { kind: 'output', answers: { by: 'call_id', callId: item.call_id, what }, output };
      // The schema requires a name when call_id is absent (Codex CLI sends outputs that way).
      return { kind: 'output', answers: withNamespace({ by: 'name', name: item.name ?? '' }, item.namespace), output };
    }
    case 'local_shell_call_output':
      return {
        kind: 'output',
        answers: { by: 'tool', callId: item.id, target: { name: LOCAL_SHELL_TOOL } },
        output: item.output,
      };
    case 'item_reference':
      // prepareTurn replaces references with the items they name before anything is converted.
      throw new Error(`item_reference ${item.id} reached item conversion unresolved`);
    default:
      return unreachable(item);
  }
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
  const entries: ConversationEntry[] = [];
  items.forEach((item, i) => {
    const narrowed = narrow(item, offset + i, ctx);
    const itemMasks = ctx.masks?.get(offset + i);
    const entry = toEntry(itemMasks ? maskNarrowed(narrowed, itemMasks) : narrowed, calls, offset + i);
    if (entry) entries.push(entry);
  });
  return entries;
}

/** What safety scans of each item: one scan item per wire item, in order (findings index them). */
export function itemsToScans(
  items: readonly InputItem[],
  offset = 0,
  ctx: ConversionContext = {},
): safetyV1.SafetyItem[] {
  return items.map((item, i) => toScan(item.type, narrow(item, offset + i, ctx)));
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
 * appear in the rendering), and for items the model does not read, every string they carry.
 */
function toScan(itemType: string, item: NarrowedItem): safetyV1.SafetyItem {
  const { lead, body } = scanParts(item);
  return { itemType, role: item.kind === 'message' ? item.role : '', text: joinText([...lead, body]) };
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
  answers: OutputAnswers,
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

/** Flattens message or tool-output content (a string or parts) to the text the model reads. */
export function contentText(content: string | readonly ContentPart[]): string {
  if (typeof content === 'string') return content;
  return content.map(partText).join('\n');
}

/** A part as the model reads it; media it cannot see stand as a placeholder. */
function partText(part: ContentPart): string {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return 'text' in part && typeof part.text === 'string' ? part.text : '';
    case 'refusal':
      return 'refusal' in part && typeof part.refusal === 'string' ? part.refusal : '';
    case 'input_image':
      return '[image]';
    case 'input_file':
      return 'filename' in part && typeof part.filename === 'string' ? `[file: ${part.filename}]` : '[file]';
    default:
      return `[${part.type}]`;
  }
}

function reasoningText(content: readonly { text: string }[], summary: readonly { text: string }[]): string {
  return (content.length > 0 ? content : summary).map((c) => c.text).join('\n');
}

/** Every string an item carries besides its `type` and `id`, joined: what safety scans of an item the model does not read. */
function carriedText(item: CarriedInputItem): string {
  const texts: string[] = [];
  for (const [key, value] of Object.entries(item)) if (key !== 'type' && key !== 'id') collectStrings(value, texts);
  return texts.join('\n');
}

/** Appends every string in `value`. */
function collectStrings(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, out);
  else if (typeof value === 'object' && value !== null) for (const v of Object.values(value)) collectStrings(v, out);
}

function joinText(parts: readonly (string | undefined)[]): string {
  return parts.filter((p) => p !== undefined && p !== '').join('\n');
}

function withNamespace<T extends object>(value: T, namespace: string | undefined): T & { namespace?: string } {
  return namespace === undefined ? value : { ...value, namespace };
}

function unreachable(value: never): never {
  throw new Error(`Unhandled item: ${JSON.stringify(value)}`);
}
