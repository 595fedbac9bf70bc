import { join } from 'node:path';
import { resolveStackOptions } from './stack-options';

describe('resolveStackOptions', () => {
  it('defaults to port 8080, info logs, loopback, 60 s to get ready and the real entry files', () => {
    const opts = resolveStackOptions({}, {});
    expect(opts.workers).toBe(1);
    expect(resolveStackOptions({}, { FASTLOOP_WORKERS: '4' }).workers).toBe(4);
    expect(resolveStackOptions({ workers: 2 }, { FASTLOOP_WORKERS: '4' }).workers).toBe(2);
    expect(opts).toMatchObject({
      port: 8080,
      logLevel: 'info',
      bindHost: '127.0.0.1',
      readyTimeoutMs: 120_000,
      stopTimeoutMs: 30_000,
    });
    expect(opts.rootDir).toBe(join(__dirname, '..', '..'));
    expect(opts.entries.edge).toBe(join(opts.rootDir, 'apps/edge/src/main.ts'));
  });

  it('takes PORT, LOG_LEVEL and BIND_HOST from the environment, with options.env over process.env', () => {
    const opts = resolveStackOptions(
      { env: { PORT: '9090' } },
      { PORT: '7070', LOG_LEVEL: 'warn', BIND_HOST: '0.0.0.0' },
    );
    expect(opts).toMatchObject({ port: 9090, logLevel: 'warn', bindHost: '0.0.0.0' });
  });

  it('prefers the options over the environment', () => {
    expect(resolveStackOptions({ port: 0, logLevel: 'error' }, { PORT: '7070', LOG_LEVEL: 'warn' })).toMatchObject({
      port: 0,
      logLevel: 'error',
    });
  });

  it('lets options.env remove an inherited variable', () => {
    expect(
      resolveStackOptions({ env: { REDIS_URL: undefined } }, { REDIS_URL: 'redis://x' }).base.REDIS_URL,
    ).toBeUndefined();
  });

  it('resolves replacement entry files against the root', () => {
    const opts = resolveStackOptions({ rootDir: '/repo', entries: { safety: 'fake.ts', edge: '/abs/edge.ts' } }, {});
    expect(opts.entries).toMatchObject({
      safety: '/repo/fake.ts',
      edge: '/abs/edge.ts',
      router: '/repo/apps/router/src/main.ts',
    });
  });

  it('runs the bundles of a folder (FASTLOOP_SERVICE_BUNDLES) instead of the TypeScript entries', () => {
    const opts = resolveStackOptions(
      { rootDir: '/repo', entries: { safety: 'fake.ts' } },
      { FASTLOOP_SERVICE_BUNDLES: 'dist' },
    );
    expect(opts.entries).toEqual({
      safety: '/repo/fake.ts',
      router: '/repo/dist/router.js',
      inference: '/repo/dist/inference.js',
      billing: '/repo/dist/billing.js',
      edge: '/repo/dist/edge.js',
    });
    expect(resolveStackOptions({ rootDir: '/repo' }, { FASTLOOP_SERVICE_BUNDLES: '/b' }).entries.edge).toBe(
      '/b/edge.js',
    );
  });

  it('rejects a bad port or timeout with an error naming it', () => {
    expect(() => resolveStackOptions({ port: 70_000 }, {})).toThrow(/options\.port/);
    expect(() => resolveStackOptions({}, { PORT: 'http' })).toThrow(/PORT must be/);
    expect(() => resolveStackOptions({ readyTimeoutMs: 0 }, {})).toThrow(/options\.readyTimeoutMs/);
    expect(() => resolveStackOptions({ workers: 0 }, {})).toThrow(/options\.workers/);
    expect(() => resolveStackOptions({}, { FASTLOOP_WORKERS: 'many' })).toThrow(/FASTLOOP_WORKERS must be/);
    expect(() => resolveStackOptions({ stopTimeoutMs: Number.NaN }, {})).toThrow(/options\.stopTimeoutMs/);
  });
});
