import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  getFreePort,
  startLocalRedis,
  startLocalRedisCluster,
  startNodeService,
  type OwnedProcess,
  type ServiceExit,
} from '@fastloop/service-kit';
import { startHaproxy, type Haproxy } from './haproxy';

const repoRoot = resolve(__dirname, '../..');

/** The services a fleet runs, each as several replicas. */
export type Role = 'edge' | 'safety' | 'router' | 'inference' | 'billing';

/** How many of each: the fleet by default (2 edges, 2 safety, 2 router, 3 workers, 1 billing). */
export const DEFAULT_REPLICAS: Readonly<Record<Role, number>> = {
  edge: 2,
  safety: 2,
  router: 2,
  inference: 3,
  billing: 1,
};

/** Options of {@link startFleet}. */
export interface FleetOptions {
  /** Folder for bundles' logs, HAProxy and outboxes. */
  readonly dir: string;
  /** Built service bundles (deploy/build-bundles.mjs): `<bundles>/<role>.js`. */
  readonly bundles: string;
  readonly replicas?: Partial<Record<Role, number>>;
  /** `standalone` (one redis-server) or `cluster` (three masters). Default standalone. */
  readonly redis?: 'standalone' | 'cluster';
  /** `key:tenant` entries every edge accepts. */
  readonly apiKeys: string;
  /** Extra environment for every service (SIM_* pacing and the like). */
  readonly env?: Readonly<Record<string, string>>;
}

/** One replica: its ports and current process (a restart replaces the process, not the ports). */
export interface Replica {
  readonly role: Role;
  readonly index: number;
  readonly name: string;
  readonly ports: { readonly admin: number; readonly grpc?: number; readonly http?: number };
  proc: OwnedProcess;
}

/** How one replica's rolling restart went. */
export interface RestartReport {
  readonly replica: string;
  /** SIGTERM → the old process exited (its drain). */
  readonly drainMs: number;
  readonly exit: ServiceExit;
  /** New process started → its /readyz answered 200. */
  readyMs: number;
  /** SIGTERM → the replacement takes traffic again (for an edge: HAProxy marks it UP). */
  totalMs: number;
}

/**
 * A fleet on one machine, wired the way the Kubernetes manifests wire it: several replicas per
 * service on loopback ports; the edge reaches safety and the router through a name that resolves to
 * every replica (`ipv4:a,b`, grpc-js's static resolver: what a headless Service's DNS gives) with
 * round_robin; the router lists the workers (INFERENCE_WORKERS); clients reach the edges through
 * HAProxy, as through an Ingress. Every process is owned by this one.
 */
export class Fleet {
  readonly replicas: Replica[] = [];
  private stopping = false;

  private constructor(
    readonly options: FleetOptions,
    readonly redisUrl: string,
    private readonly stopRedis: () => Promise<void>,
    readonly haproxy: Haproxy,
    private readonly shared: Record<string, string>,
  ) {}

  get url(): string {
    return this.haproxy.url;
  }

  get wsUrl(): string {
    return this.haproxy.wsUrl;
  }

  /** The billing replica's internal usage report (`GET /v1/usage?tenant=&…`). */
  get billingUrl(): string {
    return `http://127.0.0.1:${this.of('billing')[0].ports.http}`;
  }

  of(role: Role): Replica[] {
    return this.replicas.filter((r) => r.role === role);
  }

  static async start(options: FleetOptions): Promise<Fleet> {
    mkdirSync(options.dir, { recursive: true });
    const counts = { ...DEFAULT_REPLICAS, ...options.replicas };
    const redis =
      options.redis === 'cluster'
        ? await startLocalRedisCluster().then((c) => ({ url: c.url, stop: () => c.stop() }))
        : await startLocalRedis().then((r) => ({ url: r.url, stop: () => r.stop() }));
    let haproxy: Haproxy | undefined;
    try {
      const ports = await allocate(counts);
      haproxy = await startHaproxy({
        dir: options.dir,
        port: ports.public,
        edges: ports.edge.map((p, i) => ({ name: `edge-${i}`, port: p.http!, adminPort: p.admin })),
      });
      const shared = {
        FASTLOOP_INTERNAL_TOKEN: randomBytes(18).toString('base64url'),
        // Every safety replica signs the carried state with the same secret, every edge seals
        // reasoning with the same key: a conversation may move between replicas at any turn.
        SAFETY_STATE_SECRET: randomBytes(18).toString('base64url'),
        EDGE_REASONING_KEYS: `fleet:${randomBytes(32).toString('base64')}`,
      };
      const fleet = new Fleet(options, redis.url, redis.stop, haproxy, shared);
      for (const role of ['safety', 'inference', 'billing', 'router', 'edge'] as const) {
        await Promise.all(
          ports[role].map(async (p, index) => {
            const replica = { role, index, name: `${role}-${index}`, ports: p } as Replica;
            replica.proc = await fleet.spawn(replica, ports);
            fleet.replicas.push(replica);
          }),
        );
      }
      fleet.ports = ports;
      await fleet.untilEdgesUp();
      return fleet;
    } catch (err) {
      await haproxy?.stop();
      await redis.stop();
      throw err;
    }
  }

  private ports!: FleetPorts;

  /** The whole environment of one replica: the shared secrets and settings, and its own wiring. */
  private envFor(r: Pick<Replica, 'role' | 'index' | 'ports'>, ports: FleetPorts): Record<string, string> {
    const list = (role: Role) => ports[role].map((p) => `127.0.0.1:${p.grpc}`).join(',');
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      NODE_OPTIONS: '--enable-source-maps',
      BIND_HOST: '127.0.0.1',
      ADMIN_PORT: String(r.ports.admin),
      LOG_LEVEL: 'info',
      ...this.shared,
      ...this.options.env,
    };
    switch (r.role) {
      case 'safety':
        return { ...env, GRPC_PORT: String(r.ports.grpc) };
      case 'inference':
        return { ...env, GRPC_PORT: String(r.ports.grpc), WORKER_ID: `worker-${r.index}` };
      case 'router':
        return {
          ...env,
          GRPC_PORT: String(r.ports.grpc),
          INFERENCE_WORKERS: ports.inference.map((p, i) => `worker-${i}=127.0.0.1:${p.grpc}`).join(','),
          ROUTER_HEALTH_INTERVAL_MS: '250',
        };
      case 'billing':
        return { ...env, REDIS_URL: this.redisUrl, BILLING_HTTP_PORT: String(r.ports.http) };
      case 'edge':
        return {
          ...env,
          PORT: String(r.ports.http),
          EDGE_GRPC_PORT: String(r.ports.grpc),
          // grpc-js's static resolver: every replica, balanced round_robin (service-kit's channel
          // options), as a headless Service's DNS name gives.
          SAFETY_ADDRESS: `ipv4:${list('safety')}`,
          ROUTER_ADDRESS: `ipv4:${list('router')}`,
          REDIS_URL: this.redisUrl,
          BILLING_URL: this.billingUrl,
          FASTLOOP_API_KEYS: this.options.apiKeys,
          // Each edge pod has its own emptyDir for the usage outbox.
          USAGE_OUTBOX_DIR: join(this.options.dir, `outbox-edge-${r.index}`),
        };
    }
  }

  private async spawn(r: Pick<Replica, 'role' | 'index' | 'ports' | 'name'>, ports: FleetPorts): Promise<OwnedProcess> {
    return startNodeService({
      name: r.name,
      entry: join(this.options.bundles, `${r.role}.js`),
      cwd: repoRoot,
      env: this.envFor(r, ports),
      logFile: join(this.options.dir, `${r.name}.${Date.now()}.log`),
      readyUrl: `http://127.0.0.1:${r.ports.admin}/readyz`,
    });
  }

  /**
   * A rolling restart of one replica as Kubernetes does it with maxUnavailable 1 on this port: SIGTERM
   * (the replica drains: not ready at once, in-flight work finishes, WebSockets close with 1001),
   * wait for its exit, start its replacement on the same ports, wait for /readyz, and for an edge
   * until HAProxy takes it back.
   */
  async restart(name: string): Promise<RestartReport> {
    const replica = this.replicas.find((r) => r.name === name);
    if (!replica) throw new Error(`no replica ${name}`);
    const started = Date.now();
    const exit = await replica.proc.stop(40_000);
    const drainMs = Date.now() - started;
    const spawned = Date.now();
    replica.proc = await this.spawn(replica, this.ports);
    const report: RestartReport = { replica: name, drainMs, exit, readyMs: Date.now() - spawned, totalMs: 0 };
    if (replica.role === 'edge') await this.untilEdgesUp();
    report.totalMs = Date.now() - started;
    return report;
  }

  /** Resolves once HAProxy reports every edge UP. */
  async untilEdgesUp(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const states = await this.haproxy.serverStates();
      if (Object.values(states).length > 0 && Object.values(states).every((s) => s === 'UP')) return;
      if (Date.now() > deadline) throw new Error(`edges not UP in HAProxy: ${JSON.stringify(states)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops everything: edges first (they drain and flush usage while the rest still answers). Idempotent. */
  async stop(): Promise<Record<string, ServiceExit>> {
    const exits: Record<string, ServiceExit> = {};
    if (this.stopping) return exits;
    this.stopping = true;
    for (const role of ['edge', 'billing', 'router', 'inference', 'safety'] as const)
      await Promise.all(this.of(role).map(async (r) => (exits[r.name] = await r.proc.stop(40_000))));
    await this.haproxy.stop();
    await this.stopRedis();
    return exits;
  }
}

/** Ports of every replica (fixed across restarts) and the public one. */
interface FleetPorts extends Record<Role, { admin: number; grpc?: number; http?: number }[]> {
  public: number;
}

async function allocate(counts: Record<Role, number>): Promise<FleetPorts> {
  const taken = new Set<number>();
  const next = async () => {
    for (;;) {
      const p = await getFreePort();
      if (!taken.has(p)) return (taken.add(p), p);
    }
  };
  const many = async (n: number, f: () => Promise<{ admin: number; grpc?: number; http?: number }>) => {
    const out = [];
    for (let i = 0; i < n; i++) out.push(await f());
    return out;
  };
  return {
    public: await next(),
    safety: await many(counts.safety, async () => ({ grpc: await next(), admin: await next() })),
    router: await many(counts.router, async () => ({ grpc: await next(), admin: await next() })),
    inference: await many(counts.inference, async () => ({ grpc: await next(), admin: await next() })),
    billing: await many(counts.billing, async () => ({ http: await next(), admin: await next() })),
    edge: await many(counts.edge, async () => ({ http: await next(), grpc: await next(), admin: await next() })),
  };
}

/** Builds the service bundles into `outdir` (inside the repository, so runtime externals resolve from its node_modules). */
export function buildBundles(outdir: string): void {
  const run = spawnSync(process.execPath, [join(repoRoot, 'deploy', 'build-bundles.mjs'), '--outdir', outdir], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`build-bundles.mjs failed:\n${run.stdout}${run.stderr}`);
}
