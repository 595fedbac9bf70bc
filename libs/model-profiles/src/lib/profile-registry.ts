import { createHarmonyProfile } from './harmony/harmony-profile';
import { encodeO200kText, O200K_HARMONY_TABLE, O200K_HARMONY_VOCAB_SIZE } from './harmony/o200k-harmony-tokenizer';
import type { ModelProfile } from './model-profile';
import { ProfileNotFoundError } from './profile-errors';

/** The profile used when a model names none: gpt-oss's tokenizer and chat format. */
export const DEFAULT_PROFILE_ID = 'harmony-o200k';

/** Profiles are data plus small pure functions: each is built on first use, then shared. */
const factories: Readonly<Record<string, () => ModelProfile>> = {
  [DEFAULT_PROFILE_ID]: () =>
    createHarmonyProfile({
      id: DEFAULT_PROFILE_ID,
      encodeText: encodeO200kText,
      table: O200K_HARMONY_TABLE,
      vocabSize: O200K_HARMONY_VOCAB_SIZE,
      contextWindow: 131_072, // gpt-oss-20b / -120b
      maxOutputTokens: 32_768,
      maxTokenChars: 128, // o200k's longest entry is 128 bytes, and a code unit is at least one byte
    }),
};

const built = new Map<string, ModelProfile>();

/** Returns the profile with this id; throws {@link ProfileNotFoundError} for unknown ids. */
export function getProfile(id: string): ModelProfile {
  let profile = built.get(id);
  if (profile) return profile;
  if (!Object.hasOwn(factories, id)) throw new ProfileNotFoundError(id);
  profile = factories[id]();
  built.set(id, profile);
  return profile;
}

/** The ids `getProfile` accepts. */
export function listProfileIds(): string[] {
  return Object.keys(factories);
}
