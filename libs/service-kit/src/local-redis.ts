import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

/** A persistent Redis data folder is already served by a running redis-server (another stack). */
export class RedisDataDirInUseError extends Error {
  readonly code = 'redis_data_dir_in_use';
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `redis-server (pid ${pid}) already serves ${dataDir}: another fastloop stack of this checkout is running. Stop it, or set REDIS_URL to use a Redis of your own.`,
    );
    this.name = 'RedisDataDirInUseError';
  }
}

const HAS_SETPRIV = process.platform === 'linux' && !spawnSync('setpriv', ['--version']).error;

export interface LocalRedis {
  readonly url: string;
  readonly port: number;
  /** Stops the server and removes its folder. Idempotent. */
  stop(): Promise<void>;
}

/** Options of {@link startLocalRedis}. */
export interface LocalRedisOptions {
  timeoutMs?: number;
  /** `true`: a one-node cluster owning every slot; `'empty'`: a cluster node with no slots yet (to join others). */
  cluster?: boolean | 'empty';
  /**
   * Keep the data in this folder, with persistence on (append-only file, fsynced every second), so
   * a restart finds what the last run stored; the folder stays when the server stops. Default: a
   * throw-away temp folder and no persistence (tests).
   */
  dataDir?: string;
}

/**
 * Starts a `redis-server` on a free loopback port for the local launcher and for tests: by default
 * throw-away (no persistence, own temp dir), so no run shares state with another; with `dataDir`,
 * persistent there (`npm start`), refusing a folder another running server already uses.
 */
export async function startLocalRedis(options: LocalRedisOptions = {}): Promise<LocalRedis> {
  if (spawnSync('redis-server', ['--version']).error) throw new RedisNotInstalledError();
  const port = await getFreePort();
  const persistent = options.dataDir !== undefined;
  const dir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'fastloop-redis-'));
  if (persistent) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const owner = runningServer(join(dir, 'redis.pid'));
    if (owner !== undefined) throw new RedisDataDirInUseError(dir, owner);
  }
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    ...(persistent
      ? ['--appendonly', 'yes', '--appendfsync', 'everysec', '--pidfile', join(dir, 'redis.pid')]
      : ['--appendonly', 'no']),
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
      if (!persistent) rmSync(dir, { recursive: true, force: true });
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
    stop: () =>
      (stopped ??= child.stop(5_000).then(() => {
        if (!persistent) rmSync(dir, { recursive: true, force: true });
      })),
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

/** The pid in a redis pidfile, if a redis-server with that pid runs (a stale file from a crash does not count). */
function runningServer(pidFile: string): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number.parseInt(readFileSync(pidFile, 'utf8'), 10);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
  } catch {
    return undefined;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('redis-server') ? pid : undefined;
  } catch {
    return pid; // no /proc (macOS): a live pid is taken at its word
  }
}
