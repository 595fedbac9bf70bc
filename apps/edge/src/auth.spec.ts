import { ApiKeyAuth } from './auth';

describe('ApiKeyAuth', () => {
  const auth = new ApiKeyAuth('sk-one,sk-two:team-b');

  it('accepts configured Bearer keys and names their tenant', () => {
    expect(auth.authenticate('Bearer sk-one')).toMatchObject({ tenant: 'default' });
    expect(auth.authenticate('bearer sk-two')).toMatchObject({ tenant: 'team-b' });
  });

  it('refuses missing, malformed and unknown credentials', () => {
    expect(auth.authenticate(undefined)).toBeUndefined();
    expect(auth.authenticate('sk-one')).toBeUndefined();
    expect(auth.authenticate('Bearer sk-three')).toBeUndefined();
    expect(auth.authenticate('Bearer sk-two:team-b')).toBeUndefined();
  });

  it('never exposes a key in the principal it returns', () => {
    expect(JSON.stringify(auth.authenticate('Bearer sk-one'))).not.toContain('sk-one');
  });

  it('rejects configuration without keys or with an empty tenant', () => {
    expect(() => new ApiKeyAuth(' , ')).toThrow();
    expect(() => new ApiKeyAuth('sk-x:')).toThrow(/empty tenant/);
  });
});
