import { resolveProfile, type ConversationEntry, type ModelProfile, type RenderHeader } from '@fastloop/model-profiles';
import type { InputItem } from '@fastloop/protocol';
import type { Mask } from '../safety/redact-entries';
import { AppendLog, type LogView } from './append-log';
import type { RouteDecision } from './conversation-state';
import type { TurnInput } from './input-stage';
import { entriesOf } from './item-conversion';
import { maskItems } from './item-scan';
import { narrowItems } from './narrow-item';
import { renderFrom, type RenderedConversation } from './render-conversation';
import { offloadRender } from './render-offload';
import { toHeader } from './render-header';
import { checkFits, ContextOverflow, renderBounds, renderFailure, type RenderJob } from './render-limits';
import type { Turn } from './turn';
import type { TurnDeps, TurnRequest } from './turn-deps';

/** A turn as its model reads it: what the generate stage sends and the next state extends. */
export interface TurnRendering {
  readonly profile: ModelProfile;
  /** The one reading of the request's header (tools, tool choice, text format); see render-header.ts. */
  readonly header: RenderHeader;
  /** Every entry of the conversation as the model reads it (redacted spans masked). */
  readonly entries: LogView<ConversationEntry>;
  readonly rendered: RenderedConversation;
  /** The previous turn's rendering this one extends, when it does. */
  readonly extends?: RenderedConversation;
  /** Some of this turn's entries were masked by a safety redaction. */
  readonly redacted: boolean;
  /**
   * Set when the prompt does not fit the model's context window, on a streaming transport: the
   * stream then ends in `response.failed` with `context_length_exceeded` (what agents such as Codex
   * act on, e.g. by compacting), after the safety verdict, with nothing sent to a worker.
   */
  readonly overflow?: ContextOverflow;
}

/**
 * The render stage: the header (tools, limits and the one reading of what the request forces),
 * the new items as chat-format entries, and the conversation as tokens within the edge's limits and
 * the model's window. A continuation on the same profile extends the previous rendering (O(new
 * entries)); another model's profile, or a template that is not append-stable, renders it whole.
 */
export async function renderTurn(
  deps: TurnDeps,
  req: TurnRequest,
  input: TurnInput,
  route: RouteDecision,
): Promise<TurnRendering> {
  const profile = await resolveProfile(route.profile);
  const previous = req.previous;
  // The previous header object itself when the request's reads the same: no reading, no comparing again.
  const header = input.sameHeader && previous ? previous.rendered.header : toHeader(req.body);
  const extend =
    previous && previous.route.profile === route.profile && profile.appendStable !== false
      ? previous.rendered
      : undefined;
  const added = entriesOf(input.narrowed, input.calls, input.inputStart);
  const entries = previous ? previous.entries.append(added) : AppendLog.from(added);
  const base = { profile, header, entries, extends: extend, redacted: false };
  try {
    return { ...base, rendered: await fit(deps, req, route, { ...base, added }) };
  } catch (err) {
    // A plain JSON request gets the error as its HTTP answer (unless it may compact: run-turn.ts
    // decides then); a stream ends in response.failed.
    if (!(err instanceof ContextOverflow) || (req.transport === 'http' && !req.body.context_management)) throw err;
    const none = AppendLog.from<ConversationEntry>([]);
    const rendered = extend ?? renderFrom(profile, header, { entries: none, newEntries: [] });
    return { ...base, overflow: err, rendered };
  }
}

/**
 * The turn rendered again with safety's redaction masks applied to what the model reads: this
 * turn's entries, or, for a reloaded redacted conversation (`all`), every entry, rendered whole.
 */
export async function renderRedacted(
  turn: Turn,
  masks: ReadonlyMap<number, readonly Mask[]>,
  all: boolean,
): Promise<TurnRendering> {
  const { input, rendering, req, deps } = turn;
  const from = all ? 0 : input.inputStart;
  const narrowed = all
    ? [...narrowItems(input.items.slice(0, input.inputStart), 0, input.ctx), ...input.narrowed]
    : input.narrowed;
  const masked = entriesOf(maskItems(narrowed, from, masks), all ? new Map() : input.calls, from);
  const entries = all || !req.previous ? AppendLog.from(masked) : req.previous.entries.append(masked);
  const base = { ...rendering, entries, extends: all ? undefined : rendering.extends, redacted: true };
  return { ...base, rendered: await fit(deps, req, turn.route, { ...base, added: masked }) };
}

/** The conversation with the response's output appended: what a continuation extends. */
export function renderOutput(
  turn: Turn,
  output: readonly InputItem[],
): { entries: LogView<ConversationEntry>; rendered: RenderedConversation } {
  const { input, rendering } = turn;
  // The same conversion as for input items: a state rebuilt from the store renders identically.
  const added = entriesOf(narrowItems(output), input.calls);
  const rendered = renderFrom(rendering.profile, rendering.rendered.header, {
    entries: rendering.entries,
    newEntries: added,
    extend: rendering.rendered,
  });
  return { entries: rendering.entries.append(added), rendered };
}

/**
 * Renders entries within the edge's limits and the model's window (render-limits.ts); text too
 * costly for the event loop is tokenized on the render pool first (render-offload.ts).
 */
async function fit(
  deps: TurnDeps,
  req: TurnRequest,
  route: RouteDecision,
  on: Pick<TurnRendering, 'profile' | 'header' | 'entries' | 'extends'> & { added: readonly ConversationEntry[] },
): Promise<RenderedConversation> {
  const job: RenderJob = {
    profile: on.profile,
    header: on.header,
    body: req.body,
    entries: on.entries,
    newEntries: on.added,
    extend: on.extends,
    contextWindow: route.contextWindow,
  };
  const bounds = renderBounds(deps, job);
  const { tenant } = req.principal;
  let rendered: RenderedConversation;
  try {
    const ctx = { offload: deps.renderOffload, cache: deps.renderCache, tenant, signal: req.signal };
    const profile = await offloadRender(ctx, job, bounds);
    rendered = renderFrom(profile, job.header, job, deps.renderCache.forTenant(tenant), bounds);
  } catch (err) {
    throw renderFailure(err, job, bounds);
  }
  checkFits(rendered, job);
  return rendered;
}
