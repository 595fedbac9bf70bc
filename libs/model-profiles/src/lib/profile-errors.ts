/** Stable codes of the errors this library throws. */
export type ModelProfileErrorCode =
  | 'profile_not_found'
  | 'invalid_token'
  | 'unsupported_entry'
  | 'prompt_parse_error'
  | 'render_limit_exceeded'
  | 'token_budget_exceeded'
  | 'render_deadline_exceeded';

/**
 * Base class of every error from `@fastloop/model-profiles`. None is retryable: each one means the
 * caller passed something the profile cannot handle, and the same call fails the same way again.
 */
export abstract class ModelProfileError extends Error {
  abstract readonly code: ModelProfileErrorCode;
  readonly retryable = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** `getProfile` was asked for an id that no profile has. */
export class ProfileNotFoundError extends ModelProfileError {
  readonly code = 'profile_not_found';

  constructor(readonly profileId: string) {
    super(`Unknown model profile: ${JSON.stringify(profileId)}`);
  }
}

/** A token id outside the profile's vocabulary was given to `decode`. */
export class InvalidTokenError extends ModelProfileError {
  readonly code = 'invalid_token';

  constructor(readonly token: number) {
    super(`Token ${token} is not in the vocabulary`);
  }
}

/** An entry was given to a method that cannot render it (e.g. a user message to `renderCompletion`). */
export class UnsupportedEntryError extends ModelProfileError {
  readonly code = 'unsupported_entry';
}

/** `parsePrompt` met tokens that no rendering produces. */
export class PromptParseError extends ModelProfileError {
  readonly code = 'prompt_parse_error';
}

/** Which bound of a rendering was crossed (see {@link RenderLimits}). */
export type RenderLimitName = 'schema_depth' | 'tool_rendered_chars' | 'header_rendered_chars';

/**
 * Rendering stopped at a bound on untrusted input (a tool schema nested too deep, a tool or header
 * whose text would be too long): the work done is bounded by the limit, not by the input.
 */
export class RenderLimitError extends ModelProfileError {
  readonly code = 'render_limit_exceeded';
  /** The tool whose rendering crossed the bound, when it was one tool's. */
  tool?: { name: string; namespace?: string };

  constructor(
    readonly limit: RenderLimitName,
    readonly value: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Encoding stopped once the text had more tokens than the caller's budget (the room left in a
 * context window): the prompt cannot fit, and tokenizing the rest would only cost time.
 */
export class TokenBudgetExceededError extends ModelProfileError {
  readonly code = 'token_budget_exceeded';

  constructor(readonly budget: number) {
    super(`The text has more than ${budget} tokens.`);
  }
}

/**
 * Rendering (tokenizing) went on past the caller's deadline, its CPU budget for one request: the
 * input costs more than the service allows one request, whatever its token count.
 */
export class RenderDeadlineError extends ModelProfileError {
  readonly code = 'render_deadline_exceeded';

  constructor(readonly deadline: number) {
    super('Rendering the input took longer than its time budget.');
  }
}
