/**
 * Workers from DNS, as a Kubernetes headless Service gives them: the router resolves the A records
 * of one name (here from a real DNS server on loopback) and re-resolves it, so a worker that
 * appears takes load, and one that goes away stops getting it, without a router restart. Two
 * workers listen on the same port at 127.0.0.2 and 127.0.0.3, as two pods would.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { routerV1 } from '@fastloop/proto';
import { callUnary, createGrpcClient, getFreePort, startNodeService, type OwnedProcess } from '@fastloop/service-kit';
import { startFakeDnsServer, type FakeDnsServer } from '@fastloop/service-kit/testing';
import { serviceEntry } from './service-entries';

const ROOT = join(__dirname, '../..');
const TOKEN = 'e2e-dns-internal-token';
const NAME = 'inference.fastloop.svc.cluster.local';

describe('workers from DNS', () => {
  let dns: FakeDnsServer;
  let port: number;
  const procs: OwnedProcess[] = [];
  let client: routerV1.RouterServiceClient;
  let logDir: string;

  async function startWorker(ip: string): Promise<OwnedProcess> {
    const admin = await getFreePort();
    const proc = await startNodeService({
      name: `inference-${ip}`,
      entry: serviceEntry('inference'),
      cwd: ROOT,
      env: {
        ...process.env,
        BIND_HOST: ip,
        GRPC_PORT: String(port),
        ADMIN_PORT: String(admin),
        WORKER_ID: `pod-${ip}`,
        LOG_LEVEL: 'warn',
        FASTLOOP_INTERNAL_TOKEN: TOKEN,
        SIM_TTFT_MS: '1',
      },
      logFile: join(logDir, `inference-${ip}.log`),
      readyUrl: `http://${ip}:${admin}/readyz`,
    });
    procs.push(proc);
    return proc;
  }

  /** Where the router places 16 new conversations of distinct roots. */
  async function placements(): Promise<Set<string>> {
    const seen = new Set<string>();
    for (let i = 0; i < 16; i++) {
      const res = await callUnary(
        client.route,
        client,
        { model: 'fastloop-sim', tenant: 't', affinityKey: '', prefixKey: `k:root-${i}`, excludeWorkerIds: [] },
        { deadlineMs: 5_000 },
      );
      seen.add(res.workerAddress);
      await new Promise((r) => setTimeout(r, 20));
    }
    return seen;
  }

  async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  beforeAll(async () => {
    logDir = mkdtempSync(join(tmpdir(), 'fastloop-dns-'));
    dns = await startFakeDnsServer();
    port = await getFreePort();
    await startWorker('127.0.0.2');
    dns.setRecords(NAME, ['127.0.0.2']);
    const [grpc, admin] = [await getFreePort(), await getFreePort()];
    procs.push(
      await startNodeService({
        name: 'router',
        entry: serviceEntry('router'),
        cwd: ROOT,
        env: {
          ...process.env,
          GRPC_PORT: String(grpc),
          ADMIN_PORT: String(admin),
          LOG_LEVEL: 'info',
          FASTLOOP_INTERNAL_TOKEN: TOKEN,
          INFERENCE_WORKERS_DNS: `${NAME}:${port}`,
          ROUTER_DNS_SERVERS: dns.address,
          ROUTER_DNS_INTERVAL_MS: '200',
        },
        logFile: join(logDir, 'router.log'),
        readyUrl: `http://127.0.0.1:${admin}/readyz`,
      }),
    );
    client = createGrpcClient(routerV1.RouterServiceClient, `127.0.0.1:${grpc}`, {}, TOKEN);
  }, 180_000);

  afterAll(async () => {
    client?.close();
    for (const p of procs.reverse()) await p.stop(10_000);
    await dns?.close();
  }, 60_000);

  it('places on the workers the name resolves to, takes a new one without a restart, and drops one that goes', async () => {
    const first = `127.0.0.2:${port}`;
    const second = `127.0.0.3:${port}`;
    await eventually(async () => (await placements()).has(first), 'the first worker to take calls');
    expect([...(await placements())]).toEqual([first]);

    // Scale up: a second pod becomes ready and appears in the Service's records.
    await startWorker('127.0.0.3');
    dns.setRecords(NAME, ['127.0.0.2', '127.0.0.3']);
    await eventually(async () => (await placements()).has(second), 'the new worker to take load');
    expect(await placements()).toEqual(new Set([first, second]));

    // Scale down: the first pod leaves the records; nothing is placed on it any more.
    dns.setRecords(NAME, ['127.0.0.3']);
    await eventually(async () => !(await placements()).has(first), 'the removed worker to stop getting load');
    expect([...(await placements())]).toEqual([second]);
  }, 180_000);
});
