import { createHash } from 'node:crypto';
import { jsonEqual } from '@fastloop/protocol';
import { TokenBudgetExceededError } from '@fastloop/model-profiles';
import type { ConversationEntry, ModelProfile, RenderHeader, RenderLimits } from '@fastloop/model-profiles';
import { AppendLog, type LogView } from './append-log';
import { TokenLog, type TokenView } from './token-log';
import type { EntryRenderer } from './entry-render-cache';

/** A conversation rendered to tokens, without the trailing generation prompt. */
export interface RenderedConversation {
  /** What the header was rendered from; the next turn compares its own with it. */
  readonly header: RenderHeader;
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
    .update(
      JSON.stringify([
        header.instructions ?? null,
        header.reasoningEffort ?? null,
        header.tools,
        header.toolChoice ?? null,
        header.responseFormat ?? null,
      ]),
    )
    .digest('base64url');
}

/**
 * True when both headers render the same: {@link headerKeyOf} would give both the same key. Agents
 * resend instructions and tools with every turn; comparing them to the previous turn's is several
 * times cheaper than serializing and hashing them again.
 */
export function sameHeader(a: RenderHeader, b: RenderHeader): boolean {
  return (
    a === b ||
    (a.instructions === b.instructions &&
      a.reasoningEffort === b.reasoningEffort &&
      jsonEqual(a.tools, b.tools) &&
      jsonEqual(a.toolChoice, b.toolChoice) &&
      jsonEqual(a.responseFormat, b.responseFormat))
  );
}

/** What a turn renders: every entry, and its new ones, which extend `extend` when it is set. */
export interface RenderSource {
  entries: Iterable<ConversationEntry>;
  newEntries: readonly ConversationEntry[];
  extend?: RenderedConversation;
}

/**
 * Renders a turn: extends the previous rendering by the new entries when there is one
 * ({@link extendConversation}), else renders every entry ({@link renderConversation}).
 */
export function renderFrom(
  profile: ModelProfile,
  header: RenderHeader,
  source: RenderSource,
  cache?: EntryRenderer,
  limits: RenderLimits = {},
): RenderedConversation {
  return source.extend
    ? extendConversation(profile, source.extend, header, source.newEntries, limits)
    : renderConversation(profile, header, source.entries, cache, limits);
}

/**
 * Renders a whole conversation (the stateless path). Entry tokens come from `cache` when given.
 * `limits.maxTokens` bounds the whole rendering: tokenizing stops (`TokenBudgetExceededError`) as
 * soon as the conversation is known not to fit, so an oversized input costs at most the budget.
 */
export function renderConversation(
  profile: ModelProfile,
  header: RenderHeader,
  entries: Iterable<ConversationEntry>,
  cache?: EntryRenderer,
  limits: RenderLimits = {},
): RenderedConversation {
  if (profile.appendStable === false) {
    const whole = renderWhole(profile, header, [...entries]);
    if (limits.maxTokens !== undefined && whole.tokens.length > limits.maxTokens)
      throw new TokenBudgetExceededError(limits.maxTokens);
    return whole;
  }
  const headerTokens = profile.renderHeader(header, limits);
  const out: number[] = headerTokens.slice();
  const ends: number[] = [];
  for (const entry of entries) {
    const entryLimits = remaining(limits, out.length);
    const t = cache ? cache.render(profile, entry, entryLimits) : profile.renderEntry(entry, entryLimits);
    for (let i = 0; i < t.length; i++) out.push(t[i]);
    ends.push(out.length);
    if (limits.maxTokens !== undefined && out.length > limits.maxTokens)
      throw new TokenBudgetExceededError(limits.maxTokens);
  }
  return {
    header,
    headerKey: headerKeyOf(header),
    headerLength: headerTokens.length,
    tokens: TokenLog.from(out),
    entryEnds: AppendLog.from(ends),
  };
}

let wholeRenders = 0;

/**
 * A template that is not append-stable (adding a message changes earlier tokens) is rendered whole
 * every turn. Its header key is never reused, so the next turn sends the whole prompt with the
 * previous response as parent: the worker reuses the KV up to the first token that changed, i.e.
 * prefills from the first changed message on.
 */
export function renderWhole(
  profile: ModelProfile,
  header: RenderHeader,
  entries: readonly ConversationEntry[],
): RenderedConversation {
  const full = profile.render(header, entries);
  const generation = profile.renderGenerationPrompt();
  const cut = full.length - generation.length;
  const endsWithGeneration = cut >= 0 && generation.every((t, i) => full[cut + i] === t);
  // The generation prompt is appended separately (planGenerate); a template that does not end with
  // it cannot be split, and is refused rather than sent with it twice.
  if (!endsWithGeneration)
    throw new Error(`profile ${profile.id}: full render does not end with the generation prompt`);
  const tokens = full.slice(0, cut);
  return {
    header,
    headerKey: `whole:${++wholeRenders}:${headerKeyOf(header)}`,
    headerLength: 0,
    tokens: TokenLog.from(tokens),
    entryEnds: AppendLog.from(entries.map(() => tokens.length)),
  };
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
  limits: RenderLimits = {},
): RenderedConversation {
  let base = prev;
  const headerKey = sameHeader(prev.header, header) ? prev.headerKey : headerKeyOf(header);
  if (headerKey !== prev.headerKey) {
    const headerTokens = profile.renderHeader(header, remaining(limits, prev.tokens.length - prev.headerLength));
    const entryTokens = prev.tokens.slice(prev.headerLength);
    const tokens = TokenLog.from(concat(headerTokens, entryTokens));
    const shift = headerTokens.length - prev.headerLength;
    base = {
      header,
      headerKey,
      headerLength: headerTokens.length,
      tokens,
      entryEnds: AppendLog.from(prev.entryEnds.slice().map((e) => e + shift)),
    };
  }
  return appendEntries(profile, base, newEntries, limits);
}

/** Appends entries to a rendering whose header stays as it is: O(new entries). */
export function appendEntries(
  profile: ModelProfile,
  base: RenderedConversation,
  newEntries: readonly ConversationEntry[],
  limits: RenderLimits = {},
): RenderedConversation {
  if (newEntries.length === 0) return base;
  // Every entry is rendered before any goes onto the shared log, so a render that throws (over
  // budget) appends nothing: a partial append would leave the next turn from `base` a branch, which
  // copies the whole history. Each entry's tokens then go straight onto the log (in place past the
  // first: the new view is its tip), not through an array of all of them first.
  const rendered: ArrayLike<number>[] = [];
  let length = base.tokens.length;
  for (const entry of newEntries) {
    const t = profile.renderEntry(entry, remaining(limits, length));
    rendered.push(t);
    length += t.length;
  }
  const ends: number[] = [];
  let tokens = base.tokens;
  for (const t of rendered) {
    tokens = tokens.append(t);
    ends.push(tokens.length);
  }
  return {
    header: base.header,
    headerKey: base.headerKey,
    headerLength: base.headerLength,
    tokens,
    entryEnds: base.entryEnds.append(ends),
  };
}

/** `limits` with the token budget reduced by the `used` tokens before the next rendering. */
function remaining(limits: RenderLimits, used: number): RenderLimits {
  if (limits.maxTokens === undefined) return limits;
  if (used > limits.maxTokens) throw new TokenBudgetExceededError(limits.maxTokens);
  return { ...limits, maxTokens: limits.maxTokens - used };
}

function concat(a: readonly number[], b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
