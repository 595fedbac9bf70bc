import { invalidPrompt } from './inference-errors';

/**
 * Rejects a prompt the model cannot take. Only the request's new tokens are checked: the held
 * prefix was checked when it arrived (or sampled by the engine), so a delta call stays O(new).
 *
 * @throws DomainError `invalid_prompt`
 */
export function validatePromptTokens(newTokens: readonly number[], promptLength: number, vocabSize: number): void {
  if (promptLength === 0) throw invalidPrompt('prompt is empty');
  for (let i = 0; i < newTokens.length; i++) {
    const id = newTokens[i];
    if (id >= vocabSize)
      throw invalidPrompt(`token id ${id} at position ${i} of tokens is outside the vocabulary (size ${vocabSize})`);
  }
}
