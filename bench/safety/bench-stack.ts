import { spawn, type ChildProcess } from 'node:child_process';
import { get } from 'node:http';
import { join } from 'node:path';
import { safetyV1 } from '@fastloop/proto';
import { callUnary, createGrpcClient, getFreePort } from '@fastloop/service-kit';

/** A safety service whose guard is an inference worker with the simulated engine. */
export interface BenchStack {
  /** Classify for `tenant` ("bench": rules only; "guarded": rules and the guard). */
  classify(
    tenant: string,
    state: Buffer,
    items: safetyV1.SafetyItem[],
    deadlineMs?: number,
  ): Promise<safetyV1.ClassifyResponse>;
  /** The safety service's /metrics page. */
  safetyMetrics(): Promise<string>;
  close(): void;
}

/**
 * Starts the simulated worker (content prefix caching on or off) and a safety service that asks it
 * as the guard for tenant "guarded". Both are stopped by close(), and killed if this process exits.
 */
export async function startBenchStack(root: string, prefixCaching: boolean): Promise<BenchStack> {
  const [grpcPort, adminPort, simPort, simAdmin] = [
    await getFreePort(),
    await getFreePort(),
    await getFreePort(),
    await getFreePort(),
  ];
  const sim = start(root, 'apps/inference/src/main.ts', {
    GRPC_PORT: String(simPort),
    ADMIN_PORT: String(simAdmin),
    INFERENCE_ENGINE: 'sim',
    INFERENCE_PREFIX_CACHING: String(prefixCaching),
    SIM_TTFT_MS: '1',
    SIM_ANSWER_WORDS: '1',
  });
  const safety = start(root, 'apps/safety/src/main.ts', {
    GRPC_PORT: String(grpcPort),
    ADMIN_PORT: String(adminPort),
    SAFETY_GUARD_ADDRESS: `127.0.0.1:${simPort}`,
    SAFETY_GUARD_TIMEOUT_MS: '120000',
    SAFETY_POLICIES: JSON.stringify({ tenants: { guarded: { guard: true } } }),
  });
  const close = () => {
    safety.kill('SIGTERM');
    sim.kill('SIGTERM');
  };
  try {
    await waitReady(adminPort);
    await waitReady(simAdmin);
  } catch (err) {
    close();
    throw err;
  }
  const client = createGrpcClient(safetyV1.SafetyServiceClient, `127.0.0.1:${grpcPort}`);
  return {
    classify: (tenant, state, items, deadlineMs = 600_000) =>
      callUnary(client.classify, client, { state, items, tenant, model: 'fastloop-sim' }, { deadlineMs }),
    safetyMetrics: () => httpGet(`http://127.0.0.1:${adminPort}/metrics`),
    close: () => {
      client.close();
      close();
    },
  };
}

function start(root: string, entry: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, entry)], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'warn', SAFETY_STATE_SECRET: 'bench-only-state-secret-value', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  process.once('exit', () => child.kill('SIGKILL'));
  return child;
}

async function waitReady(adminPort: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const ready = await httpGet(`http://127.0.0.1:${adminPort}/readyz`).then(
      () => true,
      () => false,
    );
    if (ready) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the service on admin port ${adminPort} did not become ready within 60 s`);
}

/** GET `url`; rejects unless 200. */
export function httpGet(url: string): Promise<string> {
  return new Promise((ok, fail) => {
    get(url, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => (res.statusCode === 200 ? ok(body) : fail(new Error(`${url}: ${res.statusCode}`))));
    }).on('error', fail);
  });
}
