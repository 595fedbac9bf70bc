import {
  entryText,
  RenderDeadlineError,
  RenderLimitError,
  TokenBudgetExceededError,
  type ConversationEntry,
  type ModelProfile,
  type RenderHeader,
  type RenderLimits,
} from '@fastloop/model-profiles';
import { ApiError, ApiErrors, type ResponseCreateRequest } from '@fastloop/protocol';
import type { LogView } from './append-log';
import { DEFAULT_EDGE_LIMITS } from './edge-limits';
import type { RenderedConversation } from './render-conversation';
import type { TurnDeps } from './turn-deps';

/** What one turn renders. */
export interface RenderJob {
  profile: ModelProfile;
  header: RenderHeader;
  body: ResponseCreateRequest;
  /** Every entry of the conversation (rendered in full when there is nothing to extend). */
  entries: LogView<ConversationEntry>;
  /** This turn's entries. */
  newEntries: readonly ConversationEntry[];
  /** The previous turn's rendering, extended by `newEntries` when given. */
  extend?: RenderedConversation;
  contextWindow: number;
}

/**
 * The bounds of rendering one turn, at a cost bounded by them rather than by the input: a prompt
 * that cannot fit is refused from its size alone when even one token per `maxTokenChars`
 * characters would overflow (a 30 MB input answers `context_length_exceeded` without being
 * tokenized), and otherwise tokenizing stops at the window. Throws the overflow.
 */
export function renderBounds(deps: Pick<TurnDeps, 'limits'>, job: RenderJob): RenderLimits {
  const limits = deps.limits ?? DEFAULT_EDGE_LIMITS;
  const generationPrompt = job.profile.renderGenerationPrompt().length;
  // The prompt plus the generation prompt must stay below the window (see checkFits).
  const maxTokens = job.contextWindow - generationPrompt - 1;
  const floor = tokenFloor(job);
  if (floor > maxTokens) throw contextLengthExceeded(`at least ${floor + generationPrompt}`, job.contextWindow);
  return { maxTokens, maxToolChars: limits.maxToolRenderedChars, maxHeaderChars: limits.maxHeaderRenderedChars };
}

/**
 * A rendering failure as the client sees it: crossing the token budget is `context_length_exceeded`,
 * a rendering limit (schema depth, a tool's or the header's rendered text) a 400 naming the limit.
 */
export function renderFailure(err: unknown, job: RenderJob, bounds: RenderLimits): unknown {
  const generationPrompt = job.profile.renderGenerationPrompt().length;
  if (err instanceof TokenBudgetExceededError)
    return contextLengthExceeded(`more than ${(bounds.maxTokens ?? 0) + generationPrompt}`, job.contextWindow);
  if (err instanceof RenderLimitError) return renderLimitError(err, job.body);
  if (err instanceof RenderDeadlineError) return renderDeadlineExceeded(err);
  return err;
}

/**
 * Tokenizing the request overran its budget on the render pool (`EDGE_RENDER_TIMEOUT_MS`, the wait
 * for a thread included): a 400, since the same input would overrun it again.
 */
function renderDeadlineExceeded(err: RenderDeadlineError): ApiError {
  return new ApiError({
    status: 400,
    type: 'invalid_request_error',
    code: 'render_deadline_exceeded',
    message:
      "Invalid 'input': tokenizing this request took longer than the edge allows one request (EDGE_RENDER_TIMEOUT_MS); send less text or split it.",
    param: 'input',
    cause: err,
  });
}

/** Throws the overflow when the prompt and the generation prompt do not fit the window. */
export function checkFits(rendered: RenderedConversation, job: RenderJob): void {
  const promptLength = rendered.tokens.length + job.profile.renderGenerationPrompt().length;
  if (promptLength >= job.contextWindow) throw contextLengthExceeded(String(promptLength), job.contextWindow);
}

/** Fewest tokens the rendering can have: the previous rendering plus the new text at its densest. */
function tokenFloor(job: RenderJob): number {
  const perToken = job.profile.maxTokenChars;
  if (perToken === undefined) return 0;
  let chars = job.header.instructions?.length ?? 0;
  for (const entry of job.extend ? job.newEntries : job.entries) chars += entryText(entry).length;
  return (job.extend ? job.extend.tokens.length : 0) + Math.ceil(chars / perToken);
}

/**
 * The prompt does not fit the model's context window: a 400 `context_length_exceeded`, which a
 * streaming turn turns into `response.failed` instead (render-stage.ts tells it by its class).
 */
export class ContextOverflow extends ApiError {
  constructor(tokens: string, window: number) {
    const e = ApiErrors.contextLengthExceeded(
      `Your input exceeds the context window of this model (${tokens} tokens, limit ${window}). Please adjust your input and try again.`,
    );
    super({ status: e.status, type: e.type, code: e.code, message: e.message, param: e.param });
  }
}

function contextLengthExceeded(tokens: string, window: number): ApiError {
  return new ContextOverflow(tokens, window);
}

/** A rendering limit as a 400 naming the limit, with `param` at the tool (or field) that crossed it. */
function renderLimitError(err: RenderLimitError, body: ResponseCreateRequest): ApiError {
  const param = err.tool
    ? toolParam(body, err.tool)
    : body.instructions && body.instructions.length > err.value
      ? 'instructions'
      : 'tools';
  const [code, what] =
    err.limit === 'schema_depth'
      ? ['schema_too_deep', `its parameters schema is nested more than ${err.value} levels deep`]
      : err.limit === 'tool_rendered_chars'
        ? [
            'tool_too_large',
            `the tool renders to more than ${err.value} characters for the model (max_tool_rendered_chars)`,
          ]
        : [
            'header_too_large',
            `instructions and tools render to more than ${err.value} characters for the model (max_header_rendered_chars)`,
          ];
  return new ApiError({
    status: 400,
    type: 'invalid_request_error',
    code,
    message: `Invalid '${param}': ${what}.`,
    param,
    cause: err,
  });
}

/** `tools[2]` or `tools[1].tools[0]`: where the tool that crossed a limit sits in the request. */
function toolParam(body: ResponseCreateRequest, tool: { name: string; namespace?: string }): string {
  const tools = body.tools as { type?: string; name?: string; tools?: { name?: string }[] }[];
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i];
    if (tool.namespace === undefined && t.type === 'function' && t.name === tool.name) return `tools[${i}]`;
    if (tool.namespace !== undefined && t.type === 'namespace' && t.name === tool.namespace) {
      const j = (t.tools ?? []).findIndex((m) => m.name === tool.name);
      if (j >= 0) return `tools[${i}].tools[${j}]`;
    }
  }
  return 'tools';
}
