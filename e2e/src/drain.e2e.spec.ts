/**
 * Draining the way a cluster drains: SIGTERM with agents connected (running responses finish, no new
 * connection is taken, the stored responses land, then every WebSocket closes with 1001), and an
 * owner (a launcher) killed outright: its services drain on their own, an idle one at once, a busy
 * one when its last response ends — not after the watchdog's 27 s.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { WebSocket } from 'ws';
import { startStack, type Stack } from '@fastloop/launcher';
import { createRedis, getFreePort, spawnOwned, waitForReady, type OwnedProcess } from '@fastloop/service-kit';
import { serviceEntries, serviceEntry } from './service-entries';

const repoRoot = resolve(__dirname, '../..');
const KEY = 'sk-e2e-drain';
/** Stands in for a launcher: spawns a service with its own pid as FASTLOOP_PARENT_PID and waits to be killed. */
const OWNER_FIXTURE = join(repoRoot, 'libs/service-kit/src/process/fixtures/spawn-and-wait.js');

/** Alive and not a zombie (an orphan is a zombie until its new parent reaps it). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Resolves with the time `pid` stopped running (polled every 10 ms), or rejects after `timeoutMs`. */
async function exitTime(pid: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (isRunning(pid)) {
    if (Date.now() > deadline) throw new Error(`pid ${pid} still runs after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now();
}

/** Resolves once the admin port's `/readyz` stops answering 200 (polled every 10 ms, up to 10 s). */
async function notReady(adminPort: number): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    const status = await fetch(`http://127.0.0.1:${adminPort}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status !== 200) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the edge still reports ready 10 s after SIGTERM');
}

/** A WebSocket-mode client that records every event, its close code and when each came. */
function agent(wsUrl: string) {
  const ws = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${KEY}` } });
  const events: { type: string; at: number; response?: { id: string } }[] = [];
  const closed = new Promise<{ code: number; at: number }>((r) =>
    ws.on('close', (code) => r({ code, at: Date.now() })),
  );
  ws.on('message', (d) => events.push({ ...(JSON.parse(String(d)) as { type: string }), at: Date.now() }));
  const opened = new Promise<void>((ok, fail) => {
    ws.on('open', () => ok());
    ws.on('unexpected-response', (_q, res) => fail(Object.assign(new Error('refused'), { status: res.statusCode })));
    ws.on('error', fail);
  });
  const until = async (type: string) => {
    for (let i = 0; i < 3000 && !events.some((e) => e.type === type); i++) await new Promise((r) => setTimeout(r, 10));
    return events.find((e) => e.type === type);
  };
  return { ws, events, closed, opened, until };
}

const runnable = process.platform === 'linux' ? describe : describe.skip;

runnable('draining', () => {
  it('on SIGTERM finishes the running responses, refuses new connections, stores them, then closes every WebSocket with 1001 and exits 0', async () => {
    let stack: Stack | undefined;
    try {
      stack = await startStack({
        entries: serviceEntries(),
        port: 0,
        privateRedis: !process.env.REDIS_URL,
        logLevel: 'info',
        // Responses still running when the SIGTERM comes: a 1.5 s wait for the first token.
        env: {
          FASTLOOP_API_KEYS: `${KEY}:drain-tenant`,
          SIM_TTFT_MS: '1500',
          SIM_TOOL_CALLS: '0',
          SIM_ANSWER_WORDS: '30',
        },
      });
      const agents = [agent(stack.wsUrl), agent(stack.wsUrl), agent(stack.wsUrl)];
      await Promise.all(agents.map((a) => a.opened));
      for (const a of agents)
        a.ws.send(
          JSON.stringify({ type: 'response.create', model: 'fastloop-sim', input: 'a long answer', store: true }),
        );
      await Promise.all(agents.map((a) => a.until('response.created')));

      const edgePid = stack.services.edge.pid;
      const sigterm = Date.now();
      process.kill(edgePid, 'SIGTERM');
      // Once the edge has taken the signal (its readiness goes 503; a connection opened before that
      // is still served), it takes no new connections (a load balancer retries those elsewhere).
      await notReady(stack.services.edge.ports.admin);
      await expect(agent(stack.wsUrl).opened).rejects.toMatchObject({ status: 503 });
      const closes = await Promise.all(agents.map((a) => a.closed));
      const exitedAt = await exitTime(edgePid, 30_000);

      for (const [i, a] of agents.entries()) {
        const completed = a.events.find((e) => e.type === 'response.completed');
        // The running response completed, and only then the close came, with 1001 (going away).
        expect([i, completed !== undefined, closes[i].code]).toEqual([i, true, 1001]);
        expect(closes[i].at).toBeGreaterThanOrEqual(completed!.at);
      }
      // Each response it finished is in the store (written before the 1001), for a reconnect elsewhere.
      const redis = createRedis(stack.redisUrl);
      try {
        for (const a of agents) {
          const id = a.events.find((e) => e.type === 'response.completed')!.response!.id;
          expect(await redis.keys(`fastloop:resp:*:${id}`)).toHaveLength(1);
        }
      } finally {
        redis.disconnect();
      }
      const exits = await stack.stop();
      expect(exits.edge).toMatchObject({ code: 0, forced: false });
      process.stdout.write(`drain with 3 WebSockets mid-response: SIGTERM → exit ${exitedAt - sigterm} ms\n`);
    } finally {
      await stack?.stop();
    }
  }, 180_000);

  it('when its owner is killed outright, an idle service exits at once and a busy edge once its last response has ended', async () => {
    // One stack stays up (the busy edge's safety, router, workers); an extra edge and an extra
    // safety are started by stand-ins for a launcher, which the test then SIGKILLs.
    const token = 'drain-e2e-internal-token';
    let stack: Stack | undefined;
    const owners: OwnedProcess[] = [];
    try {
      stack = await startStack({
        entries: serviceEntries(),
        port: 0,
        privateRedis: !process.env.REDIS_URL,
        logLevel: 'info',
        env: {
          FASTLOOP_API_KEYS: `${KEY}:drain-tenant`,
          FASTLOOP_INTERNAL_TOKEN: token,
          SIM_TTFT_MS: '1500',
          SIM_TOOL_CALLS: '0',
          SIM_ANSWER_WORDS: '30',
        },
      });
      const [port, grpcPort, edgeAdmin, safetyAdmin] = await Promise.all([
        getFreePort(),
        getFreePort(),
        getFreePort(),
        getFreePort(),
      ]);
      const s = stack.services;
      const owned = (name: string, entry: string, env: Record<string, string>) => {
        const owner = spawnOwned({
          name: `owner of ${name}`,
          command: process.execPath,
          args: [OWNER_FIXTURE, entry],
          cwd: repoRoot,
          env: { ...process.env, BIND_HOST: '127.0.0.1', LOG_LEVEL: 'info', FASTLOOP_INTERNAL_TOKEN: token, ...env },
        });
        owners.push(owner);
        return owner;
      };
      const edgeOwner = owned('edge', serviceEntry('edge'), {
        PORT: String(port),
        EDGE_GRPC_PORT: String(grpcPort),
        ADMIN_PORT: String(edgeAdmin),
        SAFETY_ADDRESS: `127.0.0.1:${s.safety.ports.grpc}`,
        ROUTER_ADDRESS: `127.0.0.1:${s.router.ports.grpc}`,
        REDIS_URL: stack.redisUrl,
        BILLING_URL: `http://127.0.0.1:${s.billing.ports.http}`,
        FASTLOOP_API_KEYS: `${KEY}:drain-tenant`,
        USAGE_OUTBOX_DIR: mkdtempSync(join(tmpdir(), 'fastloop-drain-outbox-')),
      });
      const safetyOwner = owned('safety', serviceEntry('safety'), {
        GRPC_PORT: '0',
        ADMIN_PORT: String(safetyAdmin),
      });
      for (const admin of [edgeAdmin, safetyAdmin])
        expect(await waitForReady({ url: `http://127.0.0.1:${admin}/readyz`, deadline: Date.now() + 120_000 })).toBe(
          'ready',
        );
      const childPid = (owner: OwnedProcess) =>
        JSON.parse(owner.tail(400).find((l) => l.startsWith('{"childPid"'))!).childPid as number;
      const edgePid = childPid(edgeOwner);
      const safetyPid = childPid(safetyOwner);

      const busy = agent(`ws://127.0.0.1:${port}/v1/responses`);
      await busy.opened;
      busy.ws.send(
        JSON.stringify({ type: 'response.create', model: 'fastloop-sim', input: 'a long answer', store: false }),
      );
      await busy.until('response.created');
      const killed = Date.now();
      for (const owner of owners) owner.killNow();
      const [edgeExit, safetyExit] = await Promise.all([exitTime(edgePid, 60_000), exitTime(safetyPid, 60_000)]);
      const completed = busy.events.find((e) => e.type === 'response.completed');
      process.stdout.write(
        `owner SIGKILLed: idle safety exited after ${safetyExit - killed} ms, busy edge after ${edgeExit - killed} ms ` +
          `(its response completed after ${completed ? completed.at - killed : '–'} ms)\n`,
      );
      // The busy edge finished its running response, then went; it did not wait for the watchdog's 27 s kill.
      expect(completed).toBeDefined();
      expect(edgeExit).toBeGreaterThanOrEqual(completed!.at);
      expect(edgeExit - completed!.at).toBeLessThan(10_000);
      // The idle one went at once: its watchdog notices within 250 ms and nothing is left to drain.
      expect(safetyExit - killed).toBeLessThan(5_000);
      expect((await busy.closed).code).toBe(1001);
    } finally {
      for (const owner of owners) owner.killNow();
      await Promise.all(owners.map((o) => o.exited));
      await stack?.stop();
    }
  }, 300_000);
});
