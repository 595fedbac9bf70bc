import pino from 'pino';
import { warmCatalogProfiles } from './warm-profiles';

describe('warmCatalogProfiles', () => {
  const logger = pino({ level: 'silent' });
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
});
