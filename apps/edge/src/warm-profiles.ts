import type { Logger } from 'pino';
import { resolveProfile } from '@fastloop/model-profiles';
import type { routerV1 } from '@fastloop/proto';
import { DomainError } from '@fastloop/service-kit';

/** How long {@link warmCatalogProfiles} waits for a router that is not up yet, and how often it asks. */
export interface CatalogWait {
  waitMs: number;
  intervalMs?: number;
}

/**
 * Loads the profile of every model the router serves before the edge reports ready. Built-in
 * profiles are cheap, but one read from a model file (`gguf:…`: node-llama-cpp and the file's
 * vocabulary) took 1.4–2 s, which the first request after startup used to pay. The edge starts
 * beside its upstreams (as pods of a Deployment do): a router not up yet (a retryable failure) is
 * asked again until `wait.waitMs` (EDGE_STARTUP_CATALOG_WAIT_MS) has passed. A router that does
 * not answer by then is not fatal: those profiles are then loaded by the first turn that needs them.
 * Resolves with the ids of the profiles it loaded (the render pool's threads load them too).
 */
export async function warmCatalogProfiles(
  listModels: () => Promise<routerV1.ListModelsResponse>,
  logger: Logger,
  wait: CatalogWait = { waitMs: 0 },
): Promise<string[]> {
  let models: routerV1.ModelInfo[];
  try {
    ({ models } = await untilAnswered(listModels, wait));
  } catch (err) {
    logger.warn({ err }, 'could not list the models to load their profiles; the first turn of each will');
    return [];
  }
  const loaded: string[] = [];
  for (const id of new Set(models.map((m) => m.profile).filter((p) => p !== ''))) {
    const startedAt = performance.now();
    try {
      (await resolveProfile(id)).warmUp();
      logger.info({ profile: id, ms: Math.round(performance.now() - startedAt) }, 'model profile loaded');
      loaded.push(id);
    } catch (err) {
      logger.warn({ err, profile: id }, 'could not load a model profile; turns of its models will fail');
    }
  }
  return loaded;
}

/** `call()`, asked again after each retryable failure until `wait.waitMs` has passed. */
async function untilAnswered<T>(call: () => Promise<T>, wait: CatalogWait): Promise<T> {
  const deadline = performance.now() + wait.waitMs;
  for (;;) {
    try {
      return await call();
    } catch (err) {
      const retryable = err instanceof DomainError && err.retryable;
      if (!retryable || performance.now() + (wait.intervalMs ?? 100) > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, wait.intervalMs ?? 100));
    }
  }
}
