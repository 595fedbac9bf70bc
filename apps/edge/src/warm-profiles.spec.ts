import pino from 'pino';
import { DomainError, ErrorCode } from '@fastloop/service-kit';
import { warmCatalogProfiles } from './warm-profiles';

describe('warmCatalogProfiles', () => {
  const logger = pino({ level: 'silent' });
  afterEach(() => jest.restoreAllMocks());
  const model = (profile: string) => ({
    id: profile,
    ownedBy: 'o',
    created: 0,
    aliases: [],
    contextWindow: 8,
    profile,
  });

  it("loads each catalog model's profile once", async () => {
    const warned = jest.spyOn(logger, 'warn');
    await warmCatalogProfiles(
      async () => ({ models: [model('harmony-o200k'), model('harmony-o200k'), model('')] }),
      logger,
    );
    expect(warned).not.toHaveBeenCalled();
  });

  it('starts anyway when the router does not answer or a profile cannot be loaded', async () => {
    const warned = jest.spyOn(logger, 'warn');
    await warmCatalogProfiles(async () => Promise.reject(new Error('router down')), logger);
    await warmCatalogProfiles(async () => ({ models: [model('gguf:/nowhere/model.gguf')] }), logger);
    expect(warned).toHaveBeenCalledTimes(2);
  });

  it('asks a router that is not up yet again, until it answers or the wait is over', async () => {
    const warned = jest.spyOn(logger, 'warn');
    const down = () => new DomainError(ErrorCode.unavailable, 'connection refused', 14, true);
    let calls = 0;
    const upOnThird = async () => {
      if (++calls < 3) throw down();
      return { models: [model('harmony-o200k')] };
    };
    expect(await warmCatalogProfiles(upOnThird, logger, { waitMs: 5_000, intervalMs: 1 })).toEqual(['harmony-o200k']);
    expect(calls).toBe(3);
    expect(warned).not.toHaveBeenCalled();

    calls = 0;
    const never = async () => {
      calls++;
      throw down();
    };
    expect(await warmCatalogProfiles(never, logger, { waitMs: 50, intervalMs: 5 })).toEqual([]);
    expect(calls).toBeGreaterThan(1);
    expect(warned).toHaveBeenCalledTimes(1);

    // A failure that asking again cannot mend is not retried.
    calls = 0;
    const refused = async () => {
      calls++;
      throw new DomainError(ErrorCode.unauthenticated, 'bad token', 16, false);
    };
    expect(await warmCatalogProfiles(refused, logger, { waitMs: 5_000, intervalMs: 1 })).toEqual([]);
    expect(calls).toBe(1);
  });
});
