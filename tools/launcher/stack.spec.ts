/**
 * startStack against a fake service (fixtures/fake-service.ts) in each of the five slots: the
 * launcher's own behaviour (order, wiring, failures, shutdown) without the real services.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStack, StackStartError, STOP_ORDER, withStackLogs, type Stack, type StackOptions } from './stack';

jest.setTimeout(30_000);

const FAKE = join(__dirname, 'fixtures', 'fake-service.ts');
const ENTRIES = { safety: FAKE, router: FAKE, inference: FAKE, billing: FAKE, edge: FAKE };

/** Folders this file made, removed once it is done. */
const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function fakeOptions(env: Record<string, string> = {}): { options: StackOptions; events: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'launcher-spec-'));
  scratch.push(dir);
  const eventsFile = join(dir, 'events.txt');
  return {
    // Redis is never contacted by the fakes; an explicit URL keeps the spec from starting one.
    options: {
      port: 0,
      redisUrl: 'redis://127.0.0.1:1',
      entries: ENTRIES,
      env: { FAKE_EVENTS_FILE: eventsFile, ...env },
    },
    events: () => {
      try {
        return readFileSync(eventsFile, 'utf8').trim().split('\n');
      } catch {
        return [];
      }
    },
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function httpGet(url: string): Promise<void> {
  return new Promise((resolve) =>
    get(url, { agent: false }, (res) => res.resume().on('end', resolve)).on('error', () => resolve()),
  );
}

function httpStatus(url: string): Promise<boolean> {
  return new Promise((resolve) =>
    get(url, { agent: false }, (res) => res.resume().on('end', () => resolve(res.statusCode === 200))).on('error', () =>
      resolve(false),
    ),
  );
}

async function startFailure(options: StackOptions): Promise<StackStartError> {
  const err: unknown = await startStack(options).then(
    (stack) => stack.stop().then(() => new Error('expected startStack to fail')),
    (e: unknown) => e,
  );
  if (!(err instanceof StackStartError)) throw err;
  return err;
}

describe('startStack', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('starts every service at once but the router, once inference is ready, and stops them edge first', async () => {
    const { options, events } = fakeOptions();
    stack = await startStack(options);
    const started = events();
    expect(started.slice(0, 5).sort()).toEqual([
      'start billing',
      'start edge',
      'start inference',
      'start router',
      'start safety',
    ]);
    // The router is spawned once inference answered /readyz (start-order.spec checks the wait itself).
    expect(started.indexOf('start router')).toBeGreaterThan(started.indexOf('start inference'));

    const exits = await stack.stop();
    expect(events().slice(5)).toEqual(STOP_ORDER.map((name) => `stop ${name}`));
    expect(Object.values(exits).every((e) => e.code === 0 && !e.forced)).toBe(true);
    expect(await stack.stop()).toBe(exits);
    expect(Object.values(stack.services).some((s) => isAlive(s.pid))).toBe(false);
  });

  it('describes where the edge listens and wires every service to the others', async () => {
    const { options } = fakeOptions({ FASTLOOP_API_KEYS: 'sk-one,sk-two', SIM_TOKENS_PER_SECOND: '5000' });
    const seen: string[] = [];
    stack = await startStack({
      ...options,
      logLevel: 'debug',
      onLogLine: (service, line) => seen.push(`${service} ${JSON.parse(line).msg}`),
    });
    const { services } = stack;
    expect(stack.url).toBe(`http://127.0.0.1:${stack.port}`);
    expect(stack.wsUrl).toBe(`ws://127.0.0.1:${stack.port}/v1/responses`);
    expect(stack.grpcAddress).toBe(`127.0.0.1:${services.edge.ports.grpc}`);
    expect(stack).toMatchObject({ apiKey: 'sk-one', redisUrl: 'redis://127.0.0.1:1', redisSource: 'option' });

    const wiring = JSON.parse(readFileSync(services.edge.logFile, 'utf8').split('\n')[0]).wiring;
    expect(wiring).toMatchObject({
      PORT: String(stack.port),
      EDGE_GRPC_PORT: String(services.edge.ports.grpc),
      SAFETY_ADDRESS: `127.0.0.1:${services.safety.ports.grpc}`,
      ROUTER_ADDRESS: `127.0.0.1:${services.router.ports.grpc}`,
      FASTLOOP_API_KEYS: 'sk-one,sk-two',
      LOG_LEVEL: 'debug',
    });
    expect(stack.tail('router')).toContain(`"INFERENCE_WORKERS":"sim-0=127.0.0.1:${services.inference.ports.grpc}"`);
    expect(stack.tail('inference')).toContain('"SIM_TOKENS_PER_SECOND":"5000"');
    expect(seen.sort()).toEqual(['billing ready', 'edge ready', 'inference ready', 'router ready', 'safety ready']);
  });

  it('starts several inference workers behind the router, and a worker stopped on purpose is no crash', async () => {
    const { options, events } = fakeOptions();
    stack = await startStack({ ...options, workers: 3 });
    expect(stack.workers.map((w) => w.id)).toEqual(['sim-0', 'sim-1', 'sim-2']);
    expect(stack.workers[0]).toMatchObject({ pid: stack.services.inference.pid, instance: 'inference' });
    expect(events().filter((e) => e === 'start inference')).toHaveLength(3);
    const listed = stack.workers.map((w) => `${w.id}=127.0.0.1:${w.ports.grpc}`).join(',');
    expect(stack.tail('router')).toContain(`"INFERENCE_WORKERS":"${listed}"`);
    expect(stack.tail('inference-2')).toContain('"WORKER_ID":"sim-2"');

    const exit = await stack.workers[1].stop('SIGKILL');
    expect(exit.signal).toBe('SIGKILL');
    const crashed = await Promise.race([stack.crashed, new Promise((r) => setTimeout(() => r('none'), 300))]);
    expect(crashed).toBe('none');
    await stack.stop();
    expect(stack.workers.some((w) => isAlive(w.pid))).toBe(false);
  });

  it('reads the number of workers from FASTLOOP_WORKERS', async () => {
    const { options } = fakeOptions({ FASTLOOP_WORKERS: '2' });
    stack = await startStack(options);
    expect(stack.workers).toHaveLength(2);
  });

  it('fails with the last words of a service that exits during start, having stopped the others', async () => {
    const { options, events } = fakeOptions({ FAKE_BEHAVIOUR_ROUTER: 'crash-on-start' });
    const err = await startFailure(options);
    expect(err).toMatchObject({ code: 'service_exited', service: 'router' });
    expect(err.message).toContain('router exited with code 3 before the stack was ready');
    expect(err.message).toContain('boom: router cannot start');
    // Every other service was stopped (the edge too, which starts beside them; it may be stopped
    // before its fake wrote its first line, so it is not required here).
    const stops = events().filter((e) => e.startsWith('stop'));
    expect(stops).toEqual(expect.arrayContaining(['stop billing', 'stop inference', 'stop safety']));
    expect(stops).not.toContain('stop router');
  });

  it('starts again on new ports when a service loses the race for one it was given', async () => {
    const { options, events } = fakeOptions({ FAKE_BEHAVIOUR_BILLING: 'address-in-use-once' });
    const races: StackStartError[] = [];
    stack = await startStack({ ...options, onPortRace: (err) => races.push(err) });
    expect(races).toHaveLength(1);
    expect(races[0]).toMatchObject({ code: 'address_in_use', service: 'billing' });
    expect(races[0].message).toContain('EADDRINUSE');
    expect(events().filter((e) => e === 'start billing')).toHaveLength(2);
    expect(await httpStatus(`http://127.0.0.1:${stack.services.billing.ports.admin}/readyz`)).toBe(true);
  });

  it('gives up with address_in_use when every try loses a port', async () => {
    const { options, events } = fakeOptions({ FAKE_BEHAVIOUR_BILLING: 'address-in-use' });
    const err = await startFailure(options);
    expect(err).toMatchObject({ code: 'address_in_use', service: 'billing' });
    expect(err.message).toContain('billing exited with code 1 before the stack was ready');
    expect(events().filter((e) => e === 'start billing')).toHaveLength(3);
  });

  it('fails naming the service that never became ready', async () => {
    const { options } = fakeOptions({ FAKE_BEHAVIOUR_EDGE: 'never-ready' });
    // Long enough for the fake to start under a loaded CI machine (tsx compiles it first): the
    // test checks that its log is in the error, so it must have logged before the timeout.
    const err = await startFailure({ ...options, readyTimeoutMs: 10_000 });
    expect(err).toMatchObject({ code: 'ready_timeout', service: 'edge' });
    expect(err.logTail).toContain('"msg":"ready"');
  });

  it('reports a service that dies after the stack is up on crashed', async () => {
    const { options } = fakeOptions();
    stack = await startStack(options);
    await httpGet(`http://127.0.0.1:${stack.services.billing.ports.admin}/crash`);
    const crash = await stack.crashed;
    expect(crash).toMatchObject({ service: 'billing', exit: { code: 4 } });
    expect(crash.logTail).toContain('late boom in billing');
  });

  it('restarts a crashed service with backoff, and ends the stack when it crash-loops', async () => {
    const { options, events } = fakeOptions();
    const restarts: string[] = [];
    stack = await startStack({
      ...options,
      restart: { maxRestarts: 1, windowMs: 60_000, initialBackoffMs: 50 },
      onRestart: (r) => restarts.push(`${r.service} ${r.exit.code} ${r.attempt} ${r.delayMs}`),
    });
    const admin = `http://127.0.0.1:${stack.services.billing.ports.admin}`;
    await httpGet(`${admin}/crash`);
    // The restarted fake logs `start billing` again and serves the same admin port.
    for (
      const deadline = Date.now() + 20_000;
      events().filter((e) => e === 'start billing').length < 2;
      await new Promise((r) => setTimeout(r, 50))
    ) {
      if (Date.now() > deadline) throw new Error('billing was not restarted');
    }
    expect(restarts).toEqual(['billing 4 1 50']);
    for (
      const deadline = Date.now() + 20_000;
      !(await httpStatus(`${admin}/readyz`));
      await new Promise((r) => setTimeout(r, 50))
    ) {
      if (Date.now() > deadline) throw new Error('the restarted billing never became ready');
    }
    await httpGet(`${admin}/crash`);
    const crash = await stack.crashed;
    expect(crash).toMatchObject({ service: 'billing', exit: { code: 4 }, crashes: 2 });
    expect(restarts).toHaveLength(1);
  });

  it('kills a service that ignores SIGTERM once stopTimeoutMs has passed', async () => {
    const { options } = fakeOptions({ FAKE_BEHAVIOUR_SAFETY: 'ignore-term' });
    stack = await startStack({ ...options, stopTimeoutMs: 300 });
    const exits = await stack.stop();
    expect(exits.safety).toMatchObject({ signal: 'SIGKILL', forced: true });
    expect(exits.edge).toMatchObject({ code: 0, forced: false });
  });

  it('kills everything at once on kill(), after which stop() still resolves', async () => {
    const { options } = fakeOptions({ FAKE_BEHAVIOUR_SAFETY: 'ignore-term' });
    stack = await startStack(options);
    stack.kill();
    const exits = await stack.stop();
    expect(Object.values(exits).every((e) => e.signal === 'SIGKILL' && e.forced)).toBe(true);
  });

  it('stops what it started when the caller aborts', async () => {
    const { options } = fakeOptions();
    const aborter = new AbortController();
    const pending = startFailure({ ...options, signal: aborter.signal });
    setTimeout(() => aborter.abort(), 200);
    await expect(pending).resolves.toMatchObject({ code: 'aborted' });
  });

  it('refuses to start when an entry file is missing', async () => {
    const { options } = fakeOptions();
    const err = await startFailure({ ...options, entries: { ...ENTRIES, billing: 'apps/billing/src/nope.ts' } });
    expect(err).toMatchObject({ code: 'entry_missing', service: 'billing' });
    expect(err.message).toContain('apps/billing/src/nope.ts');
  });

  it('says which port is taken instead of starting an edge that cannot bind', async () => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as { port: number }).port;
    try {
      const err = await startFailure({ ...fakeOptions().options, port });
      expect(err).toMatchObject({ code: 'port_in_use' });
      expect(err.message).toContain(`port ${port} is already in use`);
    } finally {
      holder.close();
    }
  });
});

describe('withStackLogs', () => {
  it('prints the service logs and keeps the error when the test body fails', async () => {
    const { options } = fakeOptions();
    const stack = await startStack(options);
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await expect(withStackLogs(stack, async () => 1)).resolves.toBe(1);
      expect(write).not.toHaveBeenCalled();
      await expect(withStackLogs(stack, async () => Promise.reject(new Error('assertion')))).rejects.toThrow(
        'assertion',
      );
      expect(String(write.mock.calls[0][0])).toContain('--- last 1 line(s) of edge');
      await httpGet(`http://127.0.0.1:${stack.services.router.ports.admin}/crash`);
      await expect(withStackLogs(stack, () => new Promise(() => undefined))).rejects.toThrow(
        'router exited with code 4 during the test',
      );
    } finally {
      write.mockRestore();
      await stack.stop();
    }
  });
});
