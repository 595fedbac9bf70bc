import type { ConversationEntry, RenderHeader, RenderLimits } from './model-profile';
import {
  ModelProfileError,
  RenderDeadlineError,
  RenderLimitError,
  TokenBudgetExceededError,
  type RenderLimitName,
} from './profile-errors';
import { resolveProfile } from './profile-registry';

/**
 * One rendering to run away from a service's event loop (a worker thread of the edge's render
 * pool): a conversation's header and entries, each rendered on its own, so the caller can cache
 * and append them exactly as it does when it renders them itself. Plain data: it is structured-
 * cloned to the thread.
 */
export interface RenderTask {
  /** A profile id (`harmony-o200k`, `gguf:<path>`): the thread resolves and keeps its own copy. */
  profileId: string;
  header?: RenderHeader;
  entries: readonly ConversationEntry[];
  /** Bounds, as for one rendering; `maxTokens` counts the header and all entries together. */
  limits?: Omit<RenderLimits, 'deadline'>;
}

/** The tokens of a {@link RenderTask}: the header's (when asked) and each entry's. */
export interface RenderTaskResult {
  header?: number[];
  entries: number[][];
}

/**
 * Renders a {@link RenderTask} within `deadline` (a `performance.now()` time of this thread):
 * throws the same errors as rendering it in place (`TokenBudgetExceededError`, `RenderLimitError`,
 * `RenderDeadlineError`).
 */
export async function runRenderTask(task: RenderTask, deadline = Number.POSITIVE_INFINITY): Promise<RenderTaskResult> {
  const profile = await resolveProfile(task.profileId);
  const limits = task.limits ?? {};
  const budget = limits.maxTokens ?? Number.POSITIVE_INFINITY;
  let used = 0;
  const remaining = (): RenderLimits => ({
    ...limits,
    ...(budget === Number.POSITIVE_INFINITY ? {} : { maxTokens: Math.max(0, budget - used) }),
    ...(deadline === Number.POSITIVE_INFINITY ? {} : { deadline }),
  });
  const check = (tokens: number[]): number[] => {
    used += tokens.length;
    if (used > budget) throw new TokenBudgetExceededError(budget);
    if (performance.now() > deadline) throw new RenderDeadlineError(deadline);
    return tokens;
  };
  const header = task.header ? check(profile.renderHeader(task.header, remaining())) : undefined;
  const entries = task.entries.map((entry) => check(profile.renderEntry(entry, remaining())));
  return header ? { header, entries } : { entries };
}

/** The fields a profile error carries across a thread boundary (as a worker pool reports a task's error). */
export interface RemoteProfileError {
  name: string;
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/**
 * Rebuilds the model-profile error a {@link runRenderTask} threw on another thread, so callers
 * handle a pooled rendering's errors exactly as an in-place one's; `undefined` for other errors.
 */
export function reviveProfileError(remote: RemoteProfileError): ModelProfileError | undefined {
  const details = remote.details ?? {};
  switch (remote.code) {
    case 'token_budget_exceeded':
      return new TokenBudgetExceededError(Number(details['budget']));
    case 'render_deadline_exceeded':
      return new RenderDeadlineError(Number(details['deadline']));
    case 'render_limit_exceeded': {
      const err = new RenderLimitError(details['limit'] as RenderLimitName, Number(details['value']), remote.message);
      const tool = details['tool'] as { name: string; namespace?: string } | undefined;
      if (tool) err.tool = tool;
      return err;
    }
    default:
      return undefined;
  }
}
