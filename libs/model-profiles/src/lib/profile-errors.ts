/** Stable codes of the errors this library throws. */
export type ModelProfileErrorCode = 'profile_not_found' | 'invalid_token' | 'unsupported_entry' | 'prompt_parse_error';

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
