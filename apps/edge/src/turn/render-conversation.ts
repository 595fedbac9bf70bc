import { createHash } from 'node:crypto';
import type { ConversationEntry, ModelProfile, RenderHeader } from '@fastloop/model-profiles';
import { AppendLog, type LogView } from './append-log';
import { TokenLog, type TokenView } from './token-log';
import type { EntryRenderCache } from './entry-render-cache';

/** A conversation rendered to tokens, without the trailing generation prompt. */
export interface RenderedConversation {
  /** Identifies the header (instructions, tools, reasoning effort); a change re-renders from 0. */
  readonly headerKey: string;
  readonly headerLength: number;
  /** header ++ every entry's tokens. */
  readonly tokens: TokenView;
  /** Token offset where each entry ends, parallel to the entries. */
  readonly entryEnds: LogView<number>;
}

/** A stable key of everything the header renders from. */
export function headerKeyOf(header: RenderHeader): string {
  return createHash('sha1')
    .update(JSON.stringify([header.instructions ?? null, header.reasoningEffort ?? null, header.tools]))
    .digest('base64url');
}

/** Renders a whole conversation (the stateless path). Entry tokens come from `cache` when given. */
export function renderConversation(
  profile: ModelProfile,
  header: RenderHeader,
  entries: Iterable<ConversationEntry>,
  cache?: EntryRenderCache,
): RenderedConversation {
  const headerTokens = profile.renderHeader(header);
  const out: number[] = headerTokens.slice();
  const ends: number[] = [];
  for (const entry of entries) {
    const t = cache ? cache.render(profile, entry) : profile.renderEntry(entry);
    for (let i = 0; i < t.length; i++) out.push(t[i]);
    ends.push(out.length);
  }
  return { headerKey: headerKeyOf(header), headerLength: headerTokens.length, tokens: TokenLog.from(out), entryEnds: AppendLog.from(ends) };
}

/**
 * Extends a rendered conversation with new entries: O(new entries) when the header is unchanged
 * (harmony renders append-stably). A changed header re-renders from the first changed point, the
 * header itself, reusing the entries' tokens instead of tokenizing them again.
 */
export function extendConversation(
  profile: ModelProfile,
  prev: RenderedConversation,
  header: RenderHeader,
  newEntries: readonly ConversationEntry[],
  headerKey = headerKeyOf(header),
): RenderedConversation {
  let base = prev;
  if (headerKey !== prev.headerKey) {
    const headerTokens = profile.renderHeader(header);
    const entryTokens = prev.tokens.slice(prev.headerLength);
    const tokens = TokenLog.from(concat(headerTokens, entryTokens));
    const shift = headerTokens.length - prev.headerLength;
    base = { headerKey, headerLength: headerTokens.length, tokens, entryEnds: AppendLog.from(prev.entryEnds.slice().map((e) => e + shift)) };
  }
  return appendEntries(profile, base, newEntries);
}

/** Appends entries to a rendering whose header stays as it is: O(new entries). */
export function appendEntries(profile: ModelProfile, base: RenderedConversation, newEntries: readonly ConversationEntry[]): RenderedConversation {
  if (newEntries.length === 0) return base;
  const added: number[] = [];
  const ends: number[] = [];
  let offset = base.tokens.length;
  for (const entry of newEntries) {
    const t = profile.renderEntry(entry);
    for (let i = 0; i < t.length; i++) added.push(t[i]);
    offset += t.length;
    ends.push(offset);
  }
  return { headerKey: base.headerKey, headerLength: base.headerLength, tokens: base.tokens.append(added), entryEnds: base.entryEnds.append(ends) };
}

function concat(a: readonly number[], b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
