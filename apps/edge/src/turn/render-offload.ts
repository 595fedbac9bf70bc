import {
  entryText,
  TokenBudgetExceededError,
  type ConversationEntry,
  type ModelProfile,
  type RenderHeader,
  type RenderLimits,
} from '@fastloop/model-profiles';
import type { RenderPool } from '../render-pool/render-pool';
import type { EntryRenderCache } from './entry-render-cache';
import { sameHeader } from './render-conversation';
import type { RenderJob } from './render-limits';

/** Where a turn renders text that would hold the event loop for more than a few milliseconds. */
export interface RenderOffload {
  pool: Pick<RenderPool, 'render'>;
  /**
   * Cost of the text a turn tokenizes (characters, each non-ASCII UTF-16 unit counting
   * {@link NON_ASCII_COST}) from which it renders on the pool; below it, in place (no thread hop on
   * an agent loop's small turns). `EDGE_RENDER_POOL_MIN_CHARS`.
   */
  minCost: number;
}

/**
 * Weight of a non-ASCII UTF-16 unit against an ASCII character: the o200k encoder takes ~25 ms/MB
 * on ASCII prose and code but 170-820 ms/MB on emoji, CJK and random units
 * (bench/results/tokenizer-shapes.md), so 16K characters of either cost at most a few ms in place.
 */
export const NON_ASCII_COST = 8;

/** Default of {@link RenderOffload.minCost}: 16K ASCII characters, ~0.5 ms of prose, ~4 ms of a random word. */
export const DEFAULT_RENDER_POOL_MIN_CHARS = 16 * 1024;

/** What {@link offloadRender} needs of the turn. */
export interface OffloadContext {
  offload?: RenderOffload;
  cache: EntryRenderCache;
  tenant: string;
  signal?: AbortSignal;
}

/**
 * The profile to render `job` with: `job.profile` itself when the text to tokenize is cheap, else
 * one that serves the header's and the costly entries' tokens rendered on the pool (fair between
 * tenants, with its own deadline), so the event loop only copies them. The pool renders with the
 * same profile code and bounds, so the tokens and errors are those of rendering in place.
 */
export async function offloadRender(
  ctx: OffloadContext,
  job: Pick<RenderJob, 'profile' | 'header' | 'entries' | 'newEntries' | 'extend'>,
  bounds: RenderLimits,
): Promise<ModelProfile> {
  const { offload } = ctx;
  const profile = job.profile;
  // A template that is not append-stable renders the conversation whole, not entry by entry.
  if (!offload || profile.appendStable === false) return profile;
  // The header and the entries go to the pool each when it alone is costly: in place, both
  // together then cost at most twice the bound.
  const min = offload.minCost;
  const rendersHeader = !job.extend || !sameHeader(job.extend.header, job.header);
  const header = rendersHeader && headerCost(job.header, min) >= min ? job.header : undefined;
  const todo = job.extend ? job.newEntries : [...job.entries];
  let entries = entriesCost(todo, min) >= min ? todo : [];
  // Whole renderings read the render cache: what this tenant rendered before costs nothing there.
  if (!job.extend) entries = entries.filter((e) => ctx.cache.peek(ctx.tenant, profile, e) === undefined);
  if (entries.length === 0 && !header) return profile;
  const { maxTokens, maxToolChars, maxHeaderChars } = bounds;
  const result = await offload.pool.render(
    { profileId: profile.id, header, entries, limits: { maxTokens, maxToolChars, maxHeaderChars } },
    { tenant: ctx.tenant, signal: ctx.signal },
  );
  const tokens = new Map<ConversationEntry, readonly number[]>();
  entries.forEach((e, i) => tokens.set(e, result.entries[i]));
  return withRendered(profile, { header, headerTokens: result.header, entries: tokens });
}

/** The header's cost, up to about `min`. */
function headerCost(header: RenderHeader, min: number): number {
  return textCost(header.instructions ?? '', min) + jsonLength(header.tools, min);
}

/** The entries' cost up to `min`: counting stops there. */
function entriesCost(entries: readonly ConversationEntry[], min: number): number {
  let cost = 0;
  for (let i = 0; i < entries.length && cost < min; i++) cost += textCost(entryText(entries[i]), min - cost);
  return cost;
}

/**
 * The cost of `text` up to `cap` (the count stops there). ASCII up to the cap, the common case, is
 * found by one native regex search: reading it unit by unit showed as ~75 µs a turn in a profile of
 * the edge at 100 agent loops (1.8% of its CPU).
 */
export function textCost(text: string, cap: number): number {
  if (cap <= 0) return 0;
  const end = Math.min(text.length, cap);
  // A slice of a flat string is a view in V8: the search reads no further than the cap.
  const firstNonAscii = (end < text.length ? text.slice(0, end) : text).search(NON_ASCII);
  if (firstNonAscii < 0) return end;
  let cost = firstNonAscii;
  for (let i = firstNonAscii; i < text.length && cost < cap; i++)
    cost += text.charCodeAt(i) < 0x80 ? 1 : NON_ASCII_COST;
  return cost;
}

const NON_ASCII = /[\u0080-\uffff]/;

/** Tools render from their JSON: its length stands for their cost (bounded by the header's limit). */
function jsonLength(tools: RenderHeader['tools'], cap: number): number {
  if (tools.length === 0 || cap <= 0) return 0;
  return JSON.stringify(tools).length;
}

interface Rendered {
  header?: RenderHeader;
  headerTokens?: readonly number[];
  entries: ReadonlyMap<ConversationEntry, readonly number[]>;
}

/**
 * `profile`, serving the tokens rendered on the pool for these very objects (by identity) and
 * rendering anything else itself. Bounds hold as in place: tokens over the budget left throw
 * `TokenBudgetExceededError`, as the profile's own rendering would.
 */
function withRendered(profile: ModelProfile, rendered: Rendered): ModelProfile {
  const fits = (tokens: readonly number[], limits?: RenderLimits): number[] => {
    if (limits?.maxTokens !== undefined && tokens.length > limits.maxTokens)
      throw new TokenBudgetExceededError(limits.maxTokens);
    return tokens as number[];
  };
  const renderEntry = (entry: ConversationEntry, limits?: RenderLimits): number[] => {
    const tokens = rendered.entries.get(entry);
    return tokens ? fits(tokens, limits) : profile.renderEntry(entry, limits);
  };
  const renderHeader = (h: RenderHeader, limits?: RenderLimits): number[] =>
    h === rendered.header && rendered.headerTokens
      ? fits(rendered.headerTokens, limits)
      : profile.renderHeader(h, limits);
  // Profiles are frozen: own properties over the profile as prototype, not assignments.
  return Object.create(profile, { renderEntry: { value: renderEntry }, renderHeader: { value: renderHeader } });
}
