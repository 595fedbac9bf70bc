/**
 * Draining the way a cluster drains: SIGTERM with agents connected (running responses finish, no new
 * connection is taken, the stored responses land, then every WebSocket closes with 1001), and a
 * launcher killed outright (its services drain on their own: an idle one at once, a busy one when
 * its last response ends — not after the 27 s watchdog).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { WebSocket } from 'ws';
import { startStack, type Stack } from '@fastloop/launcher';
import { createRedis, spawnOwned, type OwnedProcess } from '@fastloop/service-kit';

const repoRoot = resolve(__dirname, '../..');
const KEY = 'sk-e2e-drain';

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
      // Not taking new connections meanwhile (a load balancer retries those on another edge).
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

  it('when its launcher is killed, an idle service exits at once and a busy edge once its last response has ended', async () => {
    const launcher: OwnedProcess = spawnOwned({
      name: 'launcher',
      command: process.execPath,
      args: ['--import', 'tsx', 'tools/launcher/main.ts', '--port', '0', '--quiet', '--private-redis'],
      cwd: repoRoot,
      env: {
        ...process.env,
        FASTLOOP_API_KEYS: KEY,
        LOG_LEVEL: 'info',
        SIM_TTFT_MS: '1500',
        SIM_TOOL_CALLS: '0',
        SIM_ANSWER_WORDS: '30',
      },
    });
    try {
      let banner = '';
      for (let i = 0; i < 1800 && !banner.includes('fastloop is running'); i++) {
        if (launcher.exitInfo) throw new Error(`the launcher exited:\n${launcher.tail(40).join('\n')}`);
        await new Promise((r) => setTimeout(r, 100));
        banner = launcher.tail(200).join('\n');
      }
      const wsUrl = /WebSocket\s+(ws:\/\/\S+)/.exec(banner)![1];
      const pids = Object.fromEntries(
        [...banner.matchAll(/^\s+(safety|router|inference|billing|edge)\S*\s+pid (\d+)/gm)].map((m) => [
          m[1],
          Number(m[2]),
        ]),
      );
      expect(Object.keys(pids).sort()).toEqual(['billing', 'edge', 'inference', 'router', 'safety']);

      const busy = agent(wsUrl);
      await busy.opened;
      busy.ws.send(
        JSON.stringify({ type: 'response.create', model: 'fastloop-sim', input: 'a long answer', store: false }),
      );
      await busy.until('response.created');
      const killed = Date.now();
      launcher.killNow();
      const exited = Object.fromEntries(
        await Promise.all(
          Object.entries(pids).map(async ([name, pid]) => [name, (await exitTime(pid, 60_000)) - killed] as const),
        ),
      );
      const completed = busy.events.find((e) => e.type === 'response.completed');
      process.stdout.write(`launcher SIGKILLed: services exited after ${JSON.stringify(exited)} ms\n`);
      // The edge finished the running response first, then went.
      expect(completed).toBeDefined();
      expect(exited.edge).toBeGreaterThanOrEqual(completed!.at - killed);
      // Nothing waited for the watchdog's 27 s kill (the drains end by themselves).
      for (const [name, ms] of Object.entries(exited)) expect([name, ms < 20_000]).toEqual([name, true]);
      // The idle ones went within a few seconds (the watchdog notices its parent within 250 ms).
      for (const name of ['safety', 'router', 'billing']) expect([name, exited[name] < 5_000]).toEqual([name, true]);
    } finally {
      launcher.killNow();
      await launcher.exited;
    }
  }, 240_000);
});
