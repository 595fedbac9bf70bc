import { loadRouterConfig } from './config';

describe('router config', () => {
  it('has defaults that work locally: one simulator worker, embedded catalog, cache-aware placement', () => {
    const { config, workers } = loadRouterConfig({ env: {} });
    expect(config).toMatchObject({
      GRPC_PORT: 50052,
      ADMIN_PORT: 9092,
      BIND_HOST: '127.0.0.1',
      ROUTER_HEALTH_SERVICE: '',
      ROUTER_POLICY: 'cache-aware',
      ROUTER_LOAD_EPSILON: 0.2,
      ROUTER_REUSE_MS: 1000,
      ROUTER_STATS_INTERVAL_MS: 25,
    });
    expect(config.ROUTER_CATALOG_FILE).toBeUndefined();
    expect(workers).toEqual([{ id: 'sim-0', address: '127.0.0.1:50053' }]);
  });

  it('reads INFERENCE_WORKERS as a comma-separated list', () => {
    const { workers } = loadRouterConfig({ env: { INFERENCE_WORKERS: 'a=10.0.0.1:50053, 10.0.0.2:50053' } });
    expect(workers.map((w) => w.id)).toEqual(['a', '10.0.0.2:50053']);
  });

  it('expects no static worker when workers come from DNS, unless some are listed too', () => {
    expect(loadRouterConfig({ env: { INFERENCE_WORKERS_DNS: 'inference.svc:50053' } }).workers).toEqual([]);
    const both = loadRouterConfig({ env: { INFERENCE_WORKERS_DNS: 'inference.svc:50053', INFERENCE_WORKERS: 'h:1' } });
    expect(both.workers.map((w) => w.id)).toEqual(['h:1']);
  });

  it('names the field when a value is invalid', () => {
    expect(() => loadRouterConfig({ env: { INFERENCE_WORKERS: 'a=nohostport' } })).toThrow(/INFERENCE_WORKERS\[0\]/);
    expect(() => loadRouterConfig({ env: { ROUTER_STATS_INTERVAL_MS: 'soon' } })).toThrow(/ROUTER_STATS_INTERVAL_MS/);
    expect(() => loadRouterConfig({ env: { ROUTER_POLICY: 'random' } })).toThrow(/ROUTER_POLICY/);
    expect(() => loadRouterConfig({ env: { INFERENCE_WORKERS_DNS: 'no-port' } })).toThrow(/INFERENCE_WORKERS_DNS/);
  });
});
