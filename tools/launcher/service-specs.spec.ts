import {
  allocatePorts,
  buildServiceEnv,
  DEV_API_KEY,
  expandInstances,
  probeHost,
  resolveApiKeys,
  SERVICE_NAMES,
  START_AFTER,
  STOP_ORDER,
  type EnvInputs,
  type StackPorts,
} from './service-specs';

const PORTS: StackPorts = {
  safety: { grpc: 5001, admin: 6001 },
  router: { grpc: 5002, admin: 6002 },
  inference: { grpc: 5003, admin: 6003 },
  billing: { http: 5004, admin: 6004 },
  edge: { http: 8080, grpc: 5005, admin: 6005 },
};

function inputs(base: Record<string, string | undefined> = {}): EnvInputs {
  return {
    base,
    ports: PORTS,
    redisUrl: 'redis://127.0.0.1:7000',
    logLevel: 'debug',
    bindHost: '127.0.0.1',
    apiKeys: 'k1,k2',
  };
}

describe('start and stop order', () => {
  it('starts the router after the inference workers and everything else at once', () => {
    expect(Object.keys(START_AFTER).sort()).toEqual([...SERVICE_NAMES].sort());
    expect(START_AFTER).toEqual({ safety: [], inference: [], billing: [], router: ['inference'], edge: [] });
  });

  it('stops the edge first and then billing, inference, router and safety', () => {
    expect(STOP_ORDER).toEqual(['edge', 'billing', 'inference', 'router', 'safety']);
  });
});

describe('allocatePorts', () => {
  it('gives every listener its own port and the edge the public one, one more pair per extra worker', async () => {
    const ports = await allocatePorts(8080, undefined, 3);
    const listeners = [...SERVICE_NAMES.map((n) => ports[n]), ...ports.moreWorkers!];
    const all = listeners.flatMap((p) => [p.admin, p.grpc, p.http].filter((x): x is number => x !== undefined));
    expect(ports.moreWorkers).toHaveLength(2);
    expect(new Set(all).size).toBe(all.length);
    expect(ports.edge.http).toBe(8080);
    expect(all.every((p) => p > 0 && p < 65_536)).toBe(true);
  });

  it('asks again when the OS hands back a port it already gave out', async () => {
    const answers = [9000, 9000, 8080, 9001, 9002, 9003, 9004, 9005, 9006, 9007, 9008, 9009, 9010];
    const ports = await allocatePorts(8080, async () => answers.shift() as number);
    expect(ports.safety).toEqual({ grpc: 9000, admin: 9001 });
    expect(ports.edge).toEqual({ http: 8080, grpc: 9008, admin: 9009 });
  });
});

describe('buildServiceEnv', () => {
  it('gives every service its admin port, bind host and log level', () => {
    for (const name of SERVICE_NAMES) {
      const env = buildServiceEnv(name, inputs());
      expect(env).toMatchObject({ ADMIN_PORT: String(PORTS[name].admin), BIND_HOST: '127.0.0.1', LOG_LEVEL: 'debug' });
    }
  });

  it('points the router at the simulated worker that inference runs as', () => {
    expect(buildServiceEnv('router', inputs())).toMatchObject({
      GRPC_PORT: '5002',
      INFERENCE_WORKERS: 'sim-0=127.0.0.1:5003',
    });
    expect(buildServiceEnv('inference', inputs())).toMatchObject({ GRPC_PORT: '5003', WORKER_ID: 'sim-0' });
  });

  it('lists every worker for the router and gives each its own port and id', () => {
    const ports: StackPorts = {
      ...PORTS,
      moreWorkers: [
        { grpc: 5103, admin: 6103 },
        { grpc: 5203, admin: 6203 },
      ],
    };
    const three = { ...inputs(), ports, workers: 3 };
    expect(buildServiceEnv('router', three).INFERENCE_WORKERS).toBe(
      'sim-0=127.0.0.1:5003,sim-1=127.0.0.1:5103,sim-2=127.0.0.1:5203',
    );
    expect(buildServiceEnv('inference-2', three)).toMatchObject({
      GRPC_PORT: '5203',
      ADMIN_PORT: '6203',
      WORKER_ID: 'sim-2',
    });
    expect(expandInstances(['safety', 'inference', 'billing'], 3)).toEqual([
      'safety',
      'inference',
      'inference-1',
      'inference-2',
      'billing',
    ]);
  });

  it("points safety's guard at the stack's own inference worker when SAFETY_GUARD_ADDRESS is `inference`", () => {
    expect(buildServiceEnv('safety', inputs({ SAFETY_GUARD_ADDRESS: 'inference' })).SAFETY_GUARD_ADDRESS).toBe(
      '127.0.0.1:5003',
    );
    expect(buildServiceEnv('safety', inputs({ SAFETY_GUARD_ADDRESS: '10.0.0.7:50055' })).SAFETY_GUARD_ADDRESS).toBe(
      '10.0.0.7:50055',
    );
  });

  it('wires the edge to safety, router, Redis and the API keys', () => {
    expect(buildServiceEnv('edge', inputs())).toMatchObject({
      PORT: '8080',
      EDGE_GRPC_PORT: '5005',
      SAFETY_ADDRESS: '127.0.0.1:5001',
      ROUTER_ADDRESS: '127.0.0.1:5002',
      REDIS_URL: 'redis://127.0.0.1:7000',
      FASTLOOP_API_KEYS: 'k1,k2',
      BILLING_URL: 'http://127.0.0.1:5004',
    });
  });

  it('gives every service the same generated internal gRPC token, or the one the caller set', () => {
    const tokens = new Set(SERVICE_NAMES.map((name) => buildServiceEnv(name, inputs()).FASTLOOP_INTERNAL_TOKEN));
    expect(tokens.size).toBe(1);
    expect([...tokens][0].length).toBeGreaterThanOrEqual(16);
    expect(
      buildServiceEnv('safety', inputs({ FASTLOOP_INTERNAL_TOKEN: 'set-by-the-operator-123' })).FASTLOOP_INTERNAL_TOKEN,
    ).toBe('set-by-the-operator-123');
  });

  it('gives billing Redis and its HTTP port but no gRPC port', () => {
    const env = buildServiceEnv('billing', inputs({ GRPC_PORT: '1' }));
    expect(env).toMatchObject({ REDIS_URL: 'redis://127.0.0.1:7000', BILLING_HTTP_PORT: '5004' });
    expect(env.GRPC_PORT).toBeUndefined();
  });

  it('passes the rest of the environment through but never inherited ports or addresses', () => {
    const env = buildServiceEnv(
      'inference',
      inputs({ PATH: '/bin', SIM_TOKENS_PER_SECOND: '5000', PORT: '1', ROUTER_ADDRESS: 'x:1', GONE: undefined }),
    );
    expect(env).toMatchObject({ PATH: '/bin', SIM_TOKENS_PER_SECOND: '5000' });
    expect(env.PORT).toBeUndefined();
    expect(env.ROUTER_ADDRESS).toBeUndefined();
    expect('GONE' in env).toBe(false);
  });
});

describe('resolveApiKeys', () => {
  it('uses the dev key when FASTLOOP_API_KEYS is unset or blank', () => {
    expect(resolveApiKeys({})).toEqual({ keys: DEV_API_KEY, first: DEV_API_KEY });
    expect(resolveApiKeys({ FASTLOOP_API_KEYS: ' , ' })).toEqual({ keys: DEV_API_KEY, first: DEV_API_KEY });
  });

  it("keeps the user's keys, trimmed, and offers the first", () => {
    expect(resolveApiKeys({ FASTLOOP_API_KEYS: ' sk-a , sk-b' })).toEqual({ keys: 'sk-a,sk-b', first: 'sk-a' });
  });

  it('offers the key part of a key:tenant entry', () => {
    expect(resolveApiKeys({ FASTLOOP_API_KEYS: 'sk-a:team-1,sk-b' })).toEqual({
      keys: 'sk-a:team-1,sk-b',
      first: 'sk-a',
    });
  });
});

describe('probeHost', () => {
  it('probes wildcard binds on loopback and brackets IPv6 literals', () => {
    expect(probeHost('0.0.0.0')).toBe('127.0.0.1');
    expect(probeHost('::')).toBe('127.0.0.1');
    expect(probeHost('127.0.0.1')).toBe('127.0.0.1');
    expect(probeHost('::1')).toBe('[::1]');
  });
});
