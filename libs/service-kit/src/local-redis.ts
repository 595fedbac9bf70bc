import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getFreePort } from './ports';
import { spawnOwned } from './process/owned-process';
import { isRedisReachable } from './redis';

const CLUSTER_ARGS = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'];

export class RedisNotInstalledError extends Error {
  readonly code = 'redis_not_installed';
  constructor() {
    super(
      "redis-server was not found on PATH. Install it (Debian/Ubuntu: 'sudo apt-get install redis-server', macOS: 'brew install redis') or set REDIS_URL.",
    );
    this.name = 'RedisNotInstalledError';
  }
}

const HAS_SETPRIV = process.platform === 'linux' && !spawnSync('setpriv', ['--version']).error;

export interface LocalRedis {
  readonly url: string;
  readonly port: number;
  /** Stops the server and removes its folder. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts a throw-away `redis-server` on a free loopback port (no persistence, own temp dir) for
 * the local launcher and for tests, so no run shares state with another.
 */
export async function startLocalRedis(
  options: {
    timeoutMs?: number;
    /** `true`: a one-node cluster owning every slot; `'empty'`: a cluster node with no slots yet (to join others). */
    cluster?: boolean | 'empty';
  } = {},
): Promise<LocalRedis> {
  if (spawnSync('redis-server', ['--version']).error) throw new RedisNotInstalledError();
  const port = await getFreePort();
  const dir = mkdtempSync(join(tmpdir(), 'fastloop-redis-'));
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--loglevel',
    'warning',
    ...(options.cluster ? CLUSTER_ARGS : []),
  ];
  // redis-server cannot watch its parent the way our services do, so where util-linux's setpriv is
  // there (Linux) the kernel sends it SIGTERM when we die, even by SIGKILL.
  const child = HAS_SETPRIV
    ? spawnOwned({ name: 'redis', command: 'setpriv', args: ['--pdeathsig', 'SIGTERM', '--', 'redis-server', ...args] })
    : spawnOwned({ name: 'redis', command: 'redis-server', args });
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  while (!(await isRedisReachable(url, 200))) {
    if (child.exitInfo || Date.now() > deadline) {
      child.killNow();
      rmSync(dir, { recursive: true, force: true });
      throw new Error(
        `redis-server did not start on port ${port}${child
          .tail(10)
          .map((l) => `\n  ${l}`)
          .join('')}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  // A one-node cluster owning every slot: it enforces Cluster's rules (CROSSSLOT) for tests.
  if (options.cluster === true) {
    spawnSync('redis-cli', ['-p', String(port), 'CLUSTER', 'ADDSLOTSRANGE', '0', '16383']);
    while (
      !String(spawnSync('redis-cli', ['-p', String(port), 'CLUSTER', 'INFO']).stdout).includes('cluster_state:ok')
    ) {
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not form a cluster`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  let stopped: Promise<void> | undefined;
  return {
    url,
    port,
    // The SIGTERM goes out synchronously (StackSupervisor.kill relies on that); the folder goes once it exited.
    stop: () => (stopped ??= child.stop(5_000).then(() => rmSync(dir, { recursive: true, force: true }))),
  };
}

/** A throw-away Redis Cluster of several masters on loopback; see {@link startLocalRedisCluster}. */
export interface LocalRedisCluster {
  /** `redis+cluster://127.0.0.1:<p1>,127.0.0.1:<p2>,…` (service-kit's createRedis gives a Cluster client). */
  readonly url: string;
  readonly nodes: readonly LocalRedis[];
  /** Stops every node and removes their folders. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts `masters` (default 3) `redis-server --cluster-enabled yes` nodes on free loopback ports and
 * joins them with `redis-cli --cluster create` (no replicas), so the 16384 slots are spread across
 * them and every multi-key command, script and transaction meets Cluster's rules for real: keys on
 * different nodes, MOVED redirections, CROSSSLOT refusals.
 */
export async function startLocalRedisCluster(
  options: { masters?: number; timeoutMs?: number } = {},
): Promise<LocalRedisCluster> {
  const masters = options.masters ?? 3;
  if (masters < 3) throw new RangeError('redis-cli --cluster create needs at least 3 masters');
  const nodes: LocalRedis[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
  };
  try {
    for (let i = 0; i < masters; i++)
      nodes.push(await startLocalRedis({ timeoutMs: options.timeoutMs, cluster: 'empty' }));
    const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
    const create = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8', timeout: options.timeoutMs ?? 30_000 },
    );
    if (create.status !== 0)
      throw new Error(`redis-cli --cluster create failed: ${(create.stderr || create.stdout).trim().slice(-500)}`);
    // Every node must have learned the whole slot map before a client may rely on any of them.
    const deadline = Date.now() + (options.timeoutMs ?? 30_000);
    for (const n of nodes) {
      while (
        !String(spawnSync('redis-cli', ['-p', String(n.port), 'CLUSTER', 'INFO']).stdout).includes('cluster_state:ok')
      ) {
        if (Date.now() > deadline) throw new Error(`redis cluster node ${n.port} did not reach cluster_state:ok`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    let stopped: Promise<void> | undefined;
    return { url: `redis+cluster://${addresses.join(',')}`, nodes, stop: () => (stopped ??= stop()) };
  } catch (err) {
    await stop();
    throw err;
  }
}
