import { safetyV1 } from '@fastloop/proto';
import {
  ApiErrors,
  isKnownInputItem,
  type CarriedInputItem,
  type ContentPart,
  type InputItem,
  type KnownInputItem,
} from '@fastloop/protocol';
import type { CallTarget } from './conversation-state';

/** The tool a `local_shell_call` calls, as the model is offered it (see render-header.ts). */
export const LOCAL_SHELL_TOOL = 'local_shell';

/**
 * A wire item narrowed once to what matters downstream. Both the model's entry and the safety
 * scan are built from this, and only from this, so the text the model reads is always the text
 * safety scans. `type` is the wire item's type (the scan's label).
 */
export type NarrowedItem = { type: string } & (
  | { kind: 'message'; role: 'system' | 'developer' | 'user' | 'assistant'; text: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'call'; format: 'function' | 'custom'; callId: string; name: string; namespace?: string; body: string }
  | { kind: 'output'; answers: OutputAnswers; output: string }
  /** An item this chat format has no rendering for: carried and stored, scanned, not read by the model. */
  | { kind: 'carried'; text: string; source: safetyV1.ItemSource }
);

/** How a tool output finds the call it answers. */
export type OutputAnswers =
  | { by: 'call_id'; callId: string; what: 'function call' | 'custom tool call' }
  | { by: 'name'; name: string; namespace?: string }
  | { by: 'tool'; callId: string; target: CallTarget };

/**
 * What narrowing needs beyond the items: `openReasoning` opens a reasoning item's
 * `encrypted_content` (sealed for the caller's tenant) to the text the model wrote, throwing an
 * ApiError for a blob that does not open; without it the item's `content` / `summary` is read.
 */
export interface NarrowContext {
  openReasoning?: (encrypted: string, param: string) => string;
  /**
   * Opens a compaction item's `encrypted_content` to the text the model reads in its place;
   * absent (no seal configured), a compaction item is an error naming it.
   */
  openCompaction?: (encrypted: string, param: string) => string;
}

/** Narrows validated wire items; `offset` is their index in the conversation (for error params). */
export function narrowItems(items: readonly InputItem[], offset = 0, ctx: NarrowContext = {}): NarrowedItem[] {
  return items.map((item, i) => narrow(item, offset + i, ctx));
}

/** Narrows one item. Exhaustive: a new known item type does not compile until handled here. */
function narrow(item: InputItem, index: number, ctx: NarrowContext): NarrowedItem {
  if (!isKnownInputItem(item)) return { type: item.type, kind: 'carried', ...carried(item) };
  return { type: item.type, ...narrowKnown(item, index, ctx) };
}

type Narrowed = NarrowedItem extends infer T ? (T extends unknown ? Omit<T, 'type'> : never) : never;

function narrowKnown(item: KnownInputItem, index: number, ctx: NarrowContext): Narrowed {
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
      const body = JSON.stringify(action);
      return { kind: 'call', format: 'function', callId: item.call_id, name: LOCAL_SHELL_TOOL, body };
    }
    case 'function_call_output':
    case 'custom_tool_call_output':
      return narrowOutput(item);
    case 'local_shell_call_output':
      return {
        kind: 'output',
        answers: { by: 'tool', callId: item.id, target: { name: LOCAL_SHELL_TOOL } },
        output: item.output,
      };
    case 'compaction':
      return { kind: 'message', role: 'user', text: openCompaction(item.encrypted_content, index, ctx) };
    case 'item_reference':
      // The input stage replaces references with the items they name before anything is narrowed.
      throw new Error(`item_reference ${item.id} reached item conversion unresolved`);
    default:
      return unreachable(item);
  }
}

/** What precedes a compaction's summary where the model reads it (the sealed text is the summary alone). */
export const SUMMARY_PREFIX = 'Summary of the conversation so far, written when its context was compacted:\n';

/** A compaction window's summary, as the model reads it (a user turn, as the window is the user's). */
function openCompaction(encrypted: string, index: number, ctx: NarrowContext): string {
  const param = `input[${index}].encrypted_content`;
  if (!ctx.openCompaction)
    throw ApiErrors.invalidRequest(
      'Compaction items cannot be read here: this server has no sealing key.',
      param,
      'invalid_encrypted_content',
    );
  return SUMMARY_PREFIX + ctx.openCompaction(encrypted, param);
}

function narrowOutput(
  item: Extract<KnownInputItem, { type: 'function_call_output' | 'custom_tool_call_output' }>,
): Narrowed {
  const output = contentText(item.output);
  const what = item.type === 'function_call_output' ? 'function call' : 'custom tool call';
  if (item.call_id !== undefined)
    return { kind: 'output', answers: { by: 'call_id', callId: item.call_id, what }, output };
  // The schema requires a name when call_id is absent (Codex CLI sends outputs that way).
  return { kind: 'output', answers: withNamespace({ by: 'name', name: item.name ?? '' }, item.namespace), output };
}

/**
 * An item of a type this code does not model (hosted-tool items, newer types): every string it
 * carries, and its author as OpenAI's names say it: `*_call` the model's, `*_output` / `*_result`
 * a tool's, anything else the user's.
 */
function carried(item: CarriedInputItem): { text: string; source: safetyV1.ItemSource } {
  const t = item.type;
  const source =
    t.endsWith('_output') || t.endsWith('_result')
      ? safetyV1.ItemSource.ITEM_SOURCE_TOOL
      : t.endsWith('_call')
        ? safetyV1.ItemSource.ITEM_SOURCE_MODEL
        : safetyV1.ItemSource.ITEM_SOURCE_INPUT;
  return { text: carriedText(item), source };
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
  // texts.join('\n'), as a rope: joining copies every string (a 3.9 MB tool output: ~13 ms of fresh
  // pages here), which an item too large to scan is refused before it needs. What is scanned is
  // flattened once, when it is encoded.
  let text = texts[0] ?? '';
  for (let i = 1; i < texts.length; i++) text = text + '\n' + texts[i];
  return text;
}

/** Appends every string in `value`. */
function collectStrings(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, out);
  else if (typeof value === 'object' && value !== null) for (const v of Object.values(value)) collectStrings(v, out);
}

export function withNamespace<T extends object>(value: T, namespace: string | undefined): T & { namespace?: string } {
  return namespace === undefined ? value : { ...value, namespace };
}

export function unreachable(value: never): never {
  throw new Error(`Unhandled item: ${JSON.stringify(value)}`);
}
