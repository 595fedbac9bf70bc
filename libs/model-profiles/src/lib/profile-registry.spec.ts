import { DEFAULT_PROFILE_ID, getProfile, listProfileIds } from './profile-registry';
import { ModelProfileError, ProfileNotFoundError } from './profile-errors';

describe('getProfile', () => {
  it('returns the harmony o200k profile for the default id, with its limits and stop tokens', () => {
    const profile = getProfile(DEFAULT_PROFILE_ID);
    expect(profile.id).toBe('harmony-o200k');
    expect(profile.contextWindow).toBe(131_072);
    expect(profile.maxOutputTokens).toBe(32_768);
    expect(profile.vocabSize).toBe(201_088);
    expect([...profile.stopTokens].sort()).toEqual([199_999, 200_002, 200_012]);
  });

  it('returns the same instance on every call', () => {
    expect(getProfile(DEFAULT_PROFILE_ID)).toBe(getProfile(DEFAULT_PROFILE_ID));
  });

  it('throws ProfileNotFoundError with code profile_not_found for an unknown id', () => {
    for (const id of ['nope', 'toString', '__proto__']) {
      const error = (() => {
        try {
          getProfile(id);
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(ProfileNotFoundError);
      expect(error).toBeInstanceOf(ModelProfileError);
      expect(error).toMatchObject({
        code: 'profile_not_found',
        profileId: id,
        retryable: false,
        name: 'ProfileNotFoundError',
      });
    }
  });

  it('lists the ids it accepts', () => {
    expect(listProfileIds()).toEqual([DEFAULT_PROFILE_ID]);
  });
  it('warms every profile up without changing what it encodes', () => {
    for (const id of listProfileIds()) {
      const profile = getProfile(id);
      const before = profile.encodeText('fn zyxwvut() — ✓');
      profile.warmUp();
      expect(profile.encodeText('fn zyxwvut() — ✓')).toEqual(before);
    }
  });
});
