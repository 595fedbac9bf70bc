import { DEV_STATE_SECRET, loadSafetyConfig, resolveStateSecret } from './config';

describe('safety config', () => {
  it('has defaults that work locally, with the development secret flagged as defaulted', () => {
    const config = loadSafetyConfig({ env: {} });
    expect(config).toMatchObject({
      GRPC_PORT: 50051,
      ADMIN_PORT: 9091,
      BIND_HOST: '127.0.0.1',
      SAFETY_MAX_ITEM_BYTES: 4 * 1024 * 1024,
      SAFETY_ACTIONS: { secret: 'block', injection: 'flag', policy: 'block' },
      SAFETY_INJECTION_THRESHOLD: 10,
      SAFETY_POLICIES: { tenants: {}, models: {} },
    });
    expect(resolveStateSecret(config)).toEqual({ secret: DEV_STATE_SECRET, defaulted: true });
  });

  it('uses SAFETY_STATE_SECRET when set', () => {
    const config = loadSafetyConfig({ env: { SAFETY_STATE_SECRET: 'a-production-secret-value' } });
    expect(resolveStateSecret(config)).toEqual({ secret: 'a-production-secret-value', defaulted: false });
  });

  it('reads actions per category and per-tenant policy lists', () => {
    const config = loadSafetyConfig({
      env: {
        SAFETY_ACTIONS: 'injection=block, secret=redact',
        SAFETY_POLICIES: '{"tenants":{"acme":{"terms":["project falcon"],"actions":{"policy":"flag"}}}}',
      },
    });
    expect(config.SAFETY_ACTIONS).toEqual({ secret: 'redact', injection: 'block', policy: 'block' });
    expect(config.SAFETY_POLICIES.tenants.acme).toMatchObject({
      terms: ['project falcon'],
      regexes: [],
      actions: { policy: 'flag' },
    });
  });

  it('names the field when a value is invalid', () => {
    expect(() => loadSafetyConfig({ env: { SAFETY_STATE_SECRET: 'short' } })).toThrow(/SAFETY_STATE_SECRET/);
    expect(() => loadSafetyConfig({ env: { SAFETY_MAX_ITEM_BYTES: '0' } })).toThrow(/SAFETY_MAX_ITEM_BYTES/);
    expect(() => loadSafetyConfig({ env: { SAFETY_ACTIONS: 'secret=nuke' } })).toThrow(/SAFETY_ACTIONS/);
    expect(() => loadSafetyConfig({ env: { SAFETY_POLICIES: '{"tenants":{"a":{"regexes":["("]}}}' } })).toThrow(
      /SAFETY_POLICIES/,
    );
  });
});
