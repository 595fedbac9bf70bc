import { loadRouterConfig } from './config';

describe('router config', () => {
  it('has defaults that work locally: one simulator worker, embedded catalog', () => {
    const { config, workers } = loadRouterConfig({ env: {} });
    expect(config).toMatchObject({
      GRPC_PORT: 50052,
      ADMIN_PORT: 9092,
      BIND_HOST: '127.0.0.1',
      ROUTER_HEALTH_INTERVAL_MS: 1000,
      ROUTER_HEALTH_TIMEOUT_MS: 500,
      ROUTER_HEALTH_SERVICE: '',
    });
    expect(config.ROUTER_CATALOG_FILE).toBeUndefined();
    expect(workers).toEqual([{ id: 'sim-0', address: '127.0.0.1:50053' }]);
  });

  it('reads INFERENCE_WORKERS as a comma-separated list', () => {
    const { workers } = loadRouterConfig({ env: { INFERENCE_WORKERS: 'a=10.0.0.1:50053, 10.0.0.2:50053' } });
    expect(workers.map((w) => w.id)).toEqual(['a', '10.0.0.2:50053']);
  });

  it('names the field when a value is invalid', () => {
    expect(() => loadRouterConfig({ env: { INFERENCE_WORKERS: 'a=nohostport' } })).toThrow(/INFERENCE_WORKERS\[0\]/);
    expect(() => loadRouterConfig({ env: { ROUTER_HEALTH_INTERVAL_MS: 'soon' } })).toThrow(/ROUTER_HEALTH_INTERVAL_MS/);
  });
});
