import { resolveProfile, type ConversationEntry, type ModelProfile, type RenderHeader } from '@fastloop/model-profiles';
import { AppendLog, type LogView } from './append-log';
import type { RouteDecision } from './conversation-state';
import { renderConversation, type RenderedConversation } from './render-conversation';
import { toHeader } from './render-header';
import { ContextOverflow, renderWithinLimits } from './render-within-limits';
import type { TurnDeps, TurnRequest } from './turn-deps';
import type { TurnInput } from './input-stage';

/** A turn rendered for its model: what the generate stage sends and the next state extends. */
export interface TurnRendering {
  readonly profile: ModelProfile;
  /** The one reading of the request's header (tools, tool choice, text format); see render-header.ts. */
  readonly header: RenderHeader;
  readonly rendered: RenderedConversation;
  /** The previous turn's rendering this one extends, when it does. */
  readonly extends?: RenderedConversation;
  /**
   * Set when the prompt does not fit the model's context window, on a streaming transport: the
   * stream then ends in `response.failed` with `context_length_exceeded` (what agents such as Codex
   * act on, e.g. by compacting), after the safety verdict, with nothing sent to a worker.
   */
  readonly overflow?: ContextOverflow;
}

/**
 * The render stage: the header, the tools and the conversation as tokens, within the edge's
 * limits and the model's window. A continuation on the same profile extends the previous
 * rendering (O(new entries)); another model's profile, or a template that is not append-stable,
 * renders the whole conversation.
 */
export async function renderTurn(
  deps: TurnDeps,
  req: TurnRequest,
  input: TurnInput,
  route: RouteDecision,
): Promise<TurnRendering> {
  const profile = await resolveProfile(route.profile);
  const header = toHeader(req.body);
  const previous = req.previous;
  const extend =
    previous && previous.route.profile === route.profile && profile.appendStable !== false
      ? previous.rendered
      : undefined;
  const base = { profile, header, extends: extend };
  try {
    return { ...base, rendered: renderEntries(deps, req, { ...base, route }, input.entries, input.newEntries) };
  } catch (err) {
    // A plain JSON request gets the error as its HTTP answer; a stream ends in response.failed.
    if (!(err instanceof ContextOverflow) || req.transport === 'http') throw err;
    const empty = AppendLog.from<ConversationEntry>([]);
    return { ...base, overflow: err, rendered: extend ?? renderConversation(profile, header, empty, deps.renderCache) };
  }
}

/**
 * Renders `all` (extending `on.extends` by `added` when it is set) within the limits: the render
 * stage's rendering, and a redacted turn's, which masks some of its entries.
 */
export function renderEntries(
  deps: TurnDeps,
  req: TurnRequest,
  on: Pick<TurnRendering, 'profile' | 'header' | 'extends'> & { route: RouteDecision },
  all: LogView<ConversationEntry>,
  added: readonly ConversationEntry[],
): RenderedConversation {
  return renderWithinLimits(deps, {
    profile: on.profile,
    header: on.header,
    body: req.body,
    entries: all,
    newEntries: added,
    extend: on.extends,
    contextWindow: on.route.contextWindow,
  });
}
