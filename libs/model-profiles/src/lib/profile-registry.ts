import { createChatTemplateProfile } from './chat-template/chat-template-profile';
import { loadGgufModelFiles } from './chat-template/gguf-model-files';
import { createHarmonyProfile } from './harmony/harmony-profile';
import { encodeO200kText, O200K_HARMONY_TABLE, O200K_HARMONY_VOCAB_SIZE } from './harmony/o200k-harmony-tokenizer';
import type { ModelProfile } from './model-profile';
import { ProfileNotFoundError } from './profile-errors';

/** The profile used when a model names none: gpt-oss's tokenizer and chat format. */
export const DEFAULT_PROFILE_ID = 'harmony-o200k';

/** Profile ids of this form are built from the model's own GGUF file (tokenizer + chat template). */
export const GGUF_PROFILE_PREFIX = 'gguf:';

/** The profile id for a GGUF model file. */
export function ggufProfileId(path: string): string {
  return GGUF_PROFILE_PREFIX + path;
}

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
const loading = new Map<string, Promise<ModelProfile>>();

/**
 * Returns the profile with this id; throws {@link ProfileNotFoundError} for unknown ids, and for
 * file-based ids not loaded yet with {@link resolveProfile}.
 */
export function getProfile(id: string): ModelProfile {
  let profile = built.get(id);
  if (profile) return profile;
  if (!Object.hasOwn(factories, id)) throw new ProfileNotFoundError(id);
  profile = factories[id]();
  built.set(id, profile);
  return profile;
}

/**
 * Like {@link getProfile}, and loads file-based profiles (`gguf:<path>`) on first use: the
 * tokenizer and chat template come from the file, so whoever renders needs no engine.
 */
export async function resolveProfile(id: string): Promise<ModelProfile> {
  const ready = built.get(id);
  if (ready) return ready;
  if (!id.startsWith(GGUF_PROFILE_PREFIX)) return getProfile(id);
  let pending = loading.get(id);
  if (!pending) {
    pending = loadGgufModelFiles(id.slice(GGUF_PROFILE_PREFIX.length)).then((files) => {
      const profile = createChatTemplateProfile({ id, files });
      built.set(id, profile);
      return profile;
    });
    pending.catch(() => loading.delete(id));
    loading.set(id, pending);
  }
  return pending;
}

/** The ids `getProfile` accepts without loading a file. */
export function listProfileIds(): string[] {
  return Object.keys(factories);
}
