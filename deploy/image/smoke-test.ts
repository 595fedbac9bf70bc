// `npm run image:test`: runs every service of the image built by `npm run image:build` the way a
// cluster would (own pid namespace, read-only root, uid 10001, no capabilities, only the image's
// environment plus the service's), checks each one's /readyz, sends one HTTP and one WebSocket
// response through the edge, waits for billing to count them, drains each service with SIGTERM,
// and writes what it measured to <image dir>/smoke-report.json. Exits 1 on any failure and says
// exactly why when it cannot run at all.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import {
  allocatePorts,
  buildServiceEnv,
  SERVICE_NAMES,
  START_AFTER,
  STOP_ORDER,
  startInOrder,
  type ServiceName,
  type StackPorts,
} from '@fastloop/launcher';
import { getFreePort, startLocalRedis, waitForReady, type LocalRedis, type OwnedProcess } from '@fastloop/service-kit';
import { chrootRunner, podmanProblem, podmanRunner, type ContainerRunner } from './container-runner';
import { fileBytes, treeBytes, unpackOciArchive, type OciBundle } from './oci-bundle';

const repoRoot = join(__dirname, '..', '..');
const imageDir = process.env.FASTLOOP_IMAGE_DIR ?? join(repoRoot, '.fastloop', 'image');
const tag = process.env.FASTLOOP_IMAGE_TAG ?? 'dev';
const archive = join(imageDir, `fastloop-${tag}.oci.tar`);
const API_KEY = 'sk-image-smoke';
const READY_BUDGET_MS = 120_000;

/** A precondition that is not met: printed as the reason the smoke test cannot run. */
class CannotRun extends Error {}

interface ServiceReport {
  readonly readyMs: number;
  readonly uid: number;
  readonly pidInNamespace: number;
  drainMs?: number;
  exit?: string;
}

function preconditions(): void {
  if (process.platform !== 'linux') throw new CannotRun('needs Linux (namespaces and chroot)');
  if (process.getuid?.() !== 0)
    throw new CannotRun('needs root (mount and pid namespaces, chroot, and files owned by uid 10001)');
  if (!existsSync(archive)) throw new CannotRun(`${archive} does not exist: run npm run image:build first`);
  for (const [tool, pkg] of [
    ['umoci', 'umoci'],
    ['unshare', 'util-linux'],
    ['setpriv', 'util-linux'],
    ['chroot', 'coreutils'],
    ['redis-server', 'redis-server'],
  ]) {
    if (spawnSync(tool, ['--version']).error)
      throw new CannotRun(`${tool} is not installed (Debian: apt-get install ${pkg})`);
  }
}

/** podman when it can run a container here, else unshare + chroot (and why podman was not used). */
function chooseRunner(bundle: OciBundle, work: string): { runner: ContainerRunner; note?: string } {
  if (process.env.FASTLOOP_IMAGE_RUNNER !== 'chroot' && !spawnSync('podman', ['--version']).error) {
    const podman = ['podman', `--root=${join(work, 'podman-root')}`, `--runroot=${join(work, 'podman-run')}`];
    const load = spawnSync(podman[0], [...podman.slice(1), 'load', '--quiet', '--input', archive], {
      encoding: 'utf8',
    });
    const id = /^Loaded image(?:\(s\))?:\s*(\S+)/m.exec(load.stdout)?.[1];
    const problem =
      load.status !== 0 || !id ? `podman load: ${(load.stderr || load.stdout).trim()}` : podmanProblem(podman, id);
    if (!problem) return { runner: podmanRunner(podman, id!, `fastloop-smoke-${process.pid}`) };
    return { runner: chrootRunner(bundle, bundle.entrypoint), note: `podman cannot run containers here (${problem})` };
  }
  return { runner: chrootRunner(bundle, bundle.entrypoint) };
}

function envFor(service: ServiceName, ports: StackPorts, redisUrl: string): Record<string, string> {
  return buildServiceEnv(service, {
    base: { SIM_TTFT_MS: '5', SIM_TOKENS_PER_SECOND: '20000', SIM_TOOL_CALLS: '0' },
    ports,
    redisUrl,
    logLevel: 'info',
    // Loopback only: the containers share the host's network.
    bindHost: '127.0.0.1',
    apiKeys: `${API_KEY}:smoke-tenant`,
  });
}

async function startService(
  runner: ContainerRunner,
  name: ServiceName,
  ports: StackPorts,
  redisUrl: string,
  running: Map<ServiceName, OwnedProcess>,
  report: Record<string, ServiceReport>,
): Promise<void> {
  const started = Date.now();
  const container = runner.start({ name, cmd: [`dist/${name}.js`], env: envFor(name, ports, redisUrl) });
  running.set(name, container);
  const died = new AbortController();
  void container.exited.then(() => died.abort());
  const outcome = await waitForReady({
    url: `http://127.0.0.1:${ports[name].admin}/readyz`,
    deadline: started + READY_BUDGET_MS,
    intervalMs: 20,
    signal: died.signal,
  });
  if (outcome !== 'ready') throw new Error(`${name} was not ready (${outcome}):\n  ${container.tail(30).join('\n  ')}`);
  const readyMs = Date.now() - started;
  const pid = runner.servicePid(container);
  const status = pid ? readFileSync(`/proc/${pid}/status`, 'utf8') : '';
  const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? -1);
  const nspid = (/^NSpid:\s+(.*)$/m.exec(status)?.[1] ?? '').trim().split(/\s+/).map(Number);
  report[name] = { readyMs, uid, pidInNamespace: nspid[nspid.length - 1] ?? -1 };
}

async function httpTurn(base: string): Promise<{ id: string; outputTokens: number }> {
  const res = await fetch(`${base}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'fastloop-sim', input: 'hello from the image', store: true }),
  });
  const body = (await res.json()) as { id: string; status: string; usage?: { output_tokens: number } };
  if (res.status !== 200 || body.status !== 'completed')
    throw new Error(`HTTP turn: ${res.status} ${JSON.stringify(body)}`);
  return { id: body.id, outputTokens: body.usage?.output_tokens ?? 0 };
}

function wsTurn(wsUrl: string, previousResponseId: string): Promise<{ id: string; outputTokens: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${API_KEY}` } });
    const timer = setTimeout(() => (ws.terminate(), reject(new Error('WebSocket turn timed out'))), 30_000);
    ws.on('open', () =>
      ws.send(
        JSON.stringify({
          type: 'response.create',
          model: 'fastloop-sim',
          previous_response_id: previousResponseId,
          input: 'and again over a WebSocket',
        }),
      ),
    );
    ws.on('message', (data) => {
      const event = JSON.parse(String(data)) as {
        type: string;
        response?: { id: string; usage?: { output_tokens: number } };
      };
      if (event.type === 'response.completed') {
        clearTimeout(timer);
        ws.close(1000);
        resolve({ id: event.response!.id, outputTokens: event.response!.usage?.output_tokens ?? 0 });
      } else if (event.type === 'error' || event.type === 'response.failed') {
        clearTimeout(timer);
        ws.close(1000);
        reject(new Error(`WebSocket turn: ${String(data)}`));
      }
    });
    ws.on('error', (err) => (clearTimeout(timer), reject(err)));
  });
}

/** Polls the edge's GET /v1/usage until billing has counted `responses` responses of the tenant. */
async function waitForUsage(base: string, responses: number, outputTokens: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  let last = '';
  while (Date.now() < deadline) {
    const res = await fetch(`${base}/v1/usage`, { headers: { authorization: `Bearer ${API_KEY}` } });
    const body = (await res.json()) as { totals?: { responses: number; output_tokens: number } };
    last = JSON.stringify(body.totals);
    if (body.totals?.responses === responses && body.totals.output_tokens === outputTokens) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`billing did not count ${responses} responses / ${outputTokens} output tokens: ${last}`);
}

/** Unmounts whatever is mounted below `dir` (deepest first), so the folder can be removed. */
function unmountUnder(dir: string): void {
  const mounts = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1])
    .filter((m): m is string => m !== undefined && m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) spawnSync('umount', [m]);
}

async function main(): Promise<number> {
  preconditions();
  const work = mkdtempSync(join(tmpdir(), 'fastloop-image-smoke-'));
  const running = new Map<ServiceName, OwnedProcess>();
  let redis: LocalRedis | undefined;
  let runner: ContainerRunner | undefined;
  const onSignal = () => {
    for (const c of running.values()) c.killNow();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const unpackStarted = Date.now();
    const bundle = unpackOciArchive(archive, work);
    const chosen = chooseRunner(bundle, work);
    runner = chosen.runner;
    if (chosen.note) console.log(`image:test: ${chosen.note}; using unshare + chroot`);
    console.log(`image:test: ${archive} unpacked in ${Date.now() - unpackStarted} ms; runner ${runner.kind}`);
    redis = await startLocalRedis();
    const ports = await allocatePorts(await getFreePort());
    const services: Record<string, ServiceReport> = {};
    const stackStarted = Date.now();
    const [use, redisUrl] = [runner, redis.url];
    await startInOrder(
      SERVICE_NAMES,
      (name) => START_AFTER[name],
      (name) => startService(use, name, ports, redisUrl, running, services),
      () => true,
    );
    const stackReadyMs = Date.now() - stackStarted;
    for (const [name, r] of Object.entries(services)) {
      if (r.uid !== 10001) throw new Error(`${name} runs as uid ${r.uid}, not 10001`);
      if (r.pidInNamespace !== 1) throw new Error(`${name} is pid ${r.pidInNamespace} in its namespace, not 1`);
    }
    const base = `http://127.0.0.1:${ports.edge.http}`;
    const http = await httpTurn(base);
    const ws = await wsTurn(`ws://127.0.0.1:${ports.edge.http}/v1/responses`, http.id);
    await waitForUsage(base, 2, http.outputTokens + ws.outputTokens);
    for (const name of STOP_ORDER) {
      const container = running.get(name)!;
      const started = Date.now();
      const exit = await container.stop(30_000);
      services[name].drainMs = Date.now() - started;
      services[name].exit = exit.forced
        ? 'killed after 30 s'
        : `code ${exit.code}${exit.signal ? ` ${exit.signal}` : ''}`;
      if (exit.forced || exit.code !== 0)
        throw new Error(
          `${name} did not drain cleanly (${services[name].exit}):\n  ${container.tail(20).join('\n  ')}`,
        );
    }
    const report = {
      image: archive,
      runner: runner.kind,
      ...(chosen.note ? { note: chosen.note } : {}),
      archiveBytes: fileBytes(archive),
      rootfsBytes: treeBytes(bundle.rootfs),
      stackReadyMs,
      services,
      turns: { http: http.id, ws: ws.id },
    };
    mkdirSync(imageDir, { recursive: true });
    writeFileSync(join(imageDir, 'smoke-report.json'), `${JSON.stringify(report, null, 2)}\n`);
    const mib = (b: number) => (b / 1048576).toFixed(1);
    console.log(
      `image:test: passed — image ${mib(report.archiveBytes)} MiB compressed, ${mib(report.rootfsBytes)} MiB unpacked; ` +
        `stack ready in ${stackReadyMs} ms`,
    );
    for (const [name, r] of Object.entries(services))
      console.log(
        `  ${name.padEnd(9)} ready ${String(r.readyMs).padStart(5)} ms  drained ${r.drainMs} ms (${r.exit})  uid ${r.uid}, pid 1`,
      );
    return 0;
  } finally {
    for (const c of running.values()) c.killNow();
    await Promise.all([...running.values()].map((c) => c.exited));
    await runner?.close();
    await redis?.stop();
    // podman's overlay storage mounts itself inside its root (even when it then fails to run).
    unmountUnder(work);
    rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof CannotRun) console.error(`image:test: cannot run: ${err.message}`);
    else console.error(`image:test: FAILED: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
