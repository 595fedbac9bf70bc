import type { DependencyHandle } from '@fastloop/service-kit';
import type { Logger } from 'pino';
import type { Engine } from './engine';

/** Options of {@link watchEngineHealth}. */
export interface EngineHealthWatch {
  engine: Pick<Engine, 'name' | 'checkHealth'>;
  /** Sets the worker's gRPC health (what the router probes). */
  setServing(serving: boolean): void;
  /**
   * The upstream as a dependency of the worker (service-kit `Dependencies`): told each answer, it
   * names the upstream and the reason once when it goes away and keeps /readyz at 503 meanwhile.
   */
  upstream?: DependencyHandle;
  /** INFERENCE_ENGINE_HEALTH_INTERVAL_MS. */
  intervalMs: number;
  logger: Logger;
}

/**
 * Feeds an upstream engine's health to the router: checks it now and every `intervalMs`, and
 * reports SERVING only while it answers. Engines without `checkHealth` are always SERVING.
 * Returns a stop function; a check in flight is aborted by it.
 */
export async function watchEngineHealth(options: EngineHealthWatch): Promise<() => void> {
  const { engine, setServing, logger } = options;
  if (!engine.checkHealth) {
    setServing(true);
    return () => undefined;
  }
  const check = engine.checkHealth.bind(engine);
  const stop = new AbortController();
  let last: boolean | undefined;
  const probe = async () => {
    const timeout = AbortSignal.timeout(Math.max(100, options.intervalMs));
    const health = await check(AbortSignal.any([stop.signal, timeout]));
    if (stop.signal.aborted) return;
    if (health.healthy) options.upstream?.up();
    else options.upstream?.down(health.reason);
    if (health.healthy !== last)
      logger[health.healthy ? 'info' : 'warn'](
        { engine: engine.name, healthy: health.healthy, ...(health.healthy ? {} : { reason: health.reason }) },
        health.healthy ? 'engine healthy: SERVING' : 'engine unhealthy: NOT_SERVING',
      );
    last = health.healthy;
    setServing(health.healthy);
  };
  await probe();
  const timer = setInterval(() => void probe(), options.intervalMs);
  timer.unref();
  return () => {
    stop.abort();
    clearInterval(timer);
  };
}
