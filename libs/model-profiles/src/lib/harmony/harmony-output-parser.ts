import type { OutputParser, ParseEvent, ToolSpec } from '../model-profile';
import { DEFAULT_TOOL_NAMESPACE } from './harmony-header-text';
import { toolAddress } from './harmony-renderer';
import { type TokenTable, TokenTextDecoder } from '../token-text-decoder';
import { type HarmonyHeader, parseHarmonyHeader } from './harmony-header';
import { HarmonyToken as T } from './harmony-tokens';

/**
 * Header tokens held back before deciding the model is not writing a header at all. Real headers
 * (`<|channel|>commentary to=ns.tool <|constrain|>json`) take about 10; the bound keeps both the
 * buffer and the delay before malformed text streams out small.
 */
export const MAX_HEADER_TOKENS = 64;

type ItemStart = Extract<ParseEvent, { type: 'item_start' }>['item'];
type Stop = Extract<ParseEvent, { type: 'item_end' }>['stop'];

const STOPS: ReadonlyMap<number, Stop> = new Map<number, Stop>([
  [T.end, 'end'],
  [T.call, 'call'],
  [T.return, 'return'],
  [T.endOfText, 'eos'],
]);

/** Single-word author such as `assistant`: anything else before `<|message|>` is prose, not a header. */
const ROLE = /^[\w.:-]+$/;

/**
 * Incremental parser of harmony completions, starting right after the generation prompt.
 * States: `header` (collecting a message header), `content` (streaming an item), `between`
 * (after a terminator, waiting for `<|start|>`), `finished`. Never throws: output that is not
 * harmony becomes message text.
 */
export class HarmonyOutputParser implements OutputParser {
  private state: 'header' | 'content' | 'between' | 'finished' = 'header';
  private header: number[] = [];
  /** Whether the header starts with a role (after `<|start|>`) or not (after the generation prompt). */
  private headerHasRole = false;
  private content: TokenTextDecoder | undefined;
  private events: ParseEvent[] = [];

  /** `namespace.name` of every freeform tool offered: calls to them are custom tool calls. */
  private readonly freeform: ReadonlySet<string>;

  constructor(
    private readonly table: TokenTable,
    tools: readonly ToolSpec[] = [],
  ) {
    this.freeform = new Set(tools.filter((t) => t.freeform).map((t) => toolAddress(t.namespace, t.name)));
  }

  push(tokens: readonly number[]): ParseEvent[] {
    if (this.state === 'finished') return [];
    for (let i = 0; i < tokens.length; i++) this.step(tokens[i]);
    return this.drain();
  }

  finish(): ParseEvent[] {
    if (this.state === 'content') this.endItem('eos');
    else if (this.state === 'header' && this.header.length > 0) this.malformed(this.header, 'eos');
    this.state = 'finished';
    return this.drain();
  }

  private step(id: number): void {
    if (this.state === 'content') this.contentToken(id);
    else if (this.state === 'header') this.headerToken(id);
    else this.betweenToken(id);
  }

  private contentToken(id: number): void {
    const stop = STOPS.get(id);
    if (stop !== undefined) return this.endItem(stop);
    if (id === T.start) {
      // A new message without `<|end|>` before it: close this one the way `<|end|>` would.
      this.endItem('end');
      return this.beginHeader(true);
    }
    this.delta(this.content!.push(id));
  }

  private headerToken(id: number): void {
    const stop = STOPS.get(id);
    if (stop !== undefined) {
      if (this.header.length > 0) this.malformed(this.header, stop);
      else this.state = 'between';
      return;
    }
    if (id === T.start) {
      if (this.header.length > 0) this.malformed(this.header, 'end');
      return this.beginHeader(true);
    }
    if (id === T.message) return this.openItem();
    this.header.push(id);
    if (this.header.length > MAX_HEADER_TOKENS) this.malformed(this.header, undefined);
  }

  private betweenToken(id: number): void {
    if (id === T.start) return this.beginHeader(true);
    if (STOPS.has(id)) return;
    // Text after a terminator without `<|start|>`: read it as a header that lacks its role.
    this.beginHeader(false);
    this.headerToken(id);
  }

  private beginHeader(hasRole: boolean): void {
    this.state = 'header';
    this.header = [];
    this.headerHasRole = hasRole;
  }

  private openItem(): void {
    const header = parseHarmonyHeader(this.header, (ids) => this.decode(ids));
    if (!this.isHeader(header)) return this.malformed([...this.header, T.message], undefined);
    this.startItem(itemFor(header, this.freeform));
  }

  private isHeader(header: HarmonyHeader): boolean {
    if (header.channel !== undefined || header.recipient !== undefined) return true;
    return this.headerHasRole ? ROLE.test(header.author) : header.author === '';
  }

  /** Streams tokens that were not a header as message text; closes the item when `stop` is given. */
  private malformed(ids: readonly number[], stop: Stop | undefined): void {
    this.startItem({ kind: 'message' });
    for (const id of ids) this.delta(this.content!.push(id));
    if (stop !== undefined) this.endItem(stop);
  }

  private startItem(item: ItemStart): void {
    this.events.push({ type: 'item_start', item });
    this.content = new TokenTextDecoder(this.table, false);
    this.header = [];
    this.state = 'content';
  }

  private endItem(stop: Stop): void {
    this.delta(this.content!.flush());
    this.events.push({ type: 'item_end', stop });
    this.content = undefined;
    this.state = 'between';
  }

  /** Adjacent deltas of one `push` are merged: consumers pay per event, not per token. */
  private delta(text: string): void {
    if (text === '') return;
    const last = this.events[this.events.length - 1];
    if (last?.type === 'delta') last.text += text;
    else this.events.push({ type: 'delta', text });
  }

  private decode(ids: readonly number[]): string {
    return new TokenTextDecoder(this.table, false).decodeAll(ids);
  }

  private drain(): ParseEvent[] {
    const events = this.events;
    this.events = [];
    return events;
  }
}

/**
 * analysis → reasoning; a recipient → a custom tool call when it is a freeform tool, else a function
 * call; anything else (final, preambles) → message.
 */
function itemFor(header: HarmonyHeader, freeform: ReadonlySet<string>): ItemStart {
  const recipient = header.recipient;
  if (recipient !== undefined && recipient !== 'all' && recipient !== 'assistant') {
    // Tool names have no dots (OpenAI: ^[a-zA-Z0-9_-]+$), so the last dot ends the namespace.
    const dot = recipient.lastIndexOf('.');
    const name = dot === -1 ? recipient : recipient.slice(dot + 1);
    const namespace =
      dot === -1 || recipient.slice(0, dot) === DEFAULT_TOOL_NAMESPACE ? undefined : recipient.slice(0, dot);
    const kind = freeform.has(toolAddress(namespace, name)) ? 'custom_tool_call' : 'function_call';
    return namespace === undefined ? { kind, name } : { kind, name, namespace };
  }
  return header.channel === 'analysis' ? { kind: 'reasoning' } : { kind: 'message' };
}
