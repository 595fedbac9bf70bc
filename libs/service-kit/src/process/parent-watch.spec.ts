import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { spawnOwned, type OwnedProcess } from './owned-process';

// Process-level but quick: a stand-in launcher spawns a real service fixture, then is SIGKILLed,
// the way a closed terminal or a crashed parent ends `npm start`.
jest.setTimeout(90_000);

const repoRoot = resolve(__dirname, '../../../..');
const launcher = join(__dirname, 'fixtures', 'spawn-and-wait.js');
const service = join(__dirname, 'fixtures', 'watched-service.ts');

/** Alive and not a zombie (a reparented child can be a zombie until its new parent reaps it). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return process.platform !== 'linux';
  }
}

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !check(); await new Promise((r) => setTimeout(r, 100))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
  }
}

async function startFixture(
  mode: 'idle' | 'block',
): Promise<{ parent: OwnedProcess; childPid: number; lines: () => string[] }> {
  const parent = spawnOwned({
    name: 'fake-launcher',
    command: process.execPath,
    args: [launcher, service],
    cwd: repoRoot,
    env: { ...process.env, FIXTURE_MODE: mode },
  });
  const lines = () => parent.tail(100);
  await until('the fixture service is ready', () => lines().some((l) => l.includes('"msg":"ready"')), 60_000);
  const childPid = (JSON.parse(lines().find((l) => l.includes('childPid')) ?? '{}') as { childPid: number }).childPid;
  return { parent, childPid, lines };
}

describe('a service whose launcher is gone', () => {
  const pids: number[] = [];
  afterAll(() => {
    for (const pid of pids) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
  });

  it('notices and drains by itself when its launcher is SIGKILLed', async () => {
    const { parent, childPid, lines } = await startFixture('idle');
    pids.push(childPid);
    parent.killNow();
    await until('the orphaned service has exited', () => !isRunning(childPid), 30_000);
    expect(lines().join('\n')).toContain('the process that started this service is gone');
  });

  it('is killed after its grace period even while its event loop is blocked', async () => {
    const { parent, childPid } = await startFixture('block');
    pids.push(childPid);
    expect(isRunning(childPid)).toBe(true);
    parent.killNow();
    await until('the blocked orphan has been killed', () => !isRunning(childPid), 30_000);
  });
});
