/**
 * No process outlives its owner, proven the hard way: a test suite whose service never becomes
 * ready still ends promptly and leaves nothing behind, and `npm start`'s launcher killed with
 * SIGKILL takes its whole stack (five services and its private Redis) with it.
 */
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { spawnOwned } from '@fastloop/service-kit';

const repoRoot = resolve(__dirname, '../..');

/** Alive and not a zombie (an orphan is a zombie until its new parent reaps it). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The pids whose parent is `ppid`, with their command names (Linux /proc). */
/**
 * The children of `ppid`, each with the file name of its argv[0] (Node 24 names its main thread
 * `MainThread`, so `comm` no longer says `node`; Debian's redis-server binary is a link to redis-check-rdb).
 */
function childrenOf(ppid: number): { pid: number; exe: string }[] {
  const out: { pid: number; exe: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const m = /^(\d+) \((.*)\) \S+ (\d+)/.exec(stat);
      if (m && Number(m[3]) === ppid) out.push({ pid: Number(m[1]), exe: argv0(entry) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function argv0(pid: string): string {
  const first = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
  return basename(first.split(' ')[0] ?? '');
}

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !check(); await new Promise((r) => setTimeout(r, 200))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
  }
}

const runnable = process.platform === 'linux' ? describe : describe.skip;

runnable('no process outlives its owner', () => {
  it('ends a suite whose service never becomes ready promptly, with its last words, and leaves no process behind', async () => {
    const pidsFile = join(mkdtempSync(join(tmpdir(), 'never-ready-')), 'pids');
    writeFileSync(pidsFile, '');
    const env = {
      ...process.env,
      FASTLOOP_READY_TIMEOUT_MS: '8000',
      FIXTURE_PIDS_FILE: pidsFile,
      FASTLOOP_TEST_PROGRESS_DIR: undefined,
    };
    const jest = spawnOwned({
      name: 'jest (fixture suite)',
      command: process.execPath,
      args: [
        require.resolve('jest/bin/jest'),
        '-c',
        'tools/launcher/fixtures/never-ready-suite/jest.config.ts',
        '--ci',
      ],
      cwd: repoRoot,
      env,
    });
    // Generous for a loaded machine; without the fixes this run never ends at all.
    const exit = await Promise.race([
      jest.exited,
      new Promise<'hung'>((r) => setTimeout(() => r('hung'), 180_000).unref()),
    ]);
    if (exit === 'hung') await jest.stop(1_000);
    const output = jest
      .tail(400)
      .join('\n')
      .replace(/\x1b\[[0-9;]*m/g, ''); // nx forces colour on
    expect(exit).toMatchObject({ code: 1 });
    expect(output).toContain('safety was not ready in time');
    expect(output).toContain('"msg":"ready"'); // the service's own last words are quoted
    expect(output).toMatch(/stopped 1 child process\(es\) a test file left running: safety \(pid \d+\)/);
    expect(output).toMatch(/Tests:\s+1 failed, 1 passed, 2 total/);
    const pids = readFileSync(pidsFile, 'utf8').trim().split('\n').map(Number);
    expect(new Set(pids).size).toBe(2);
    expect(pids.filter(isRunning)).toEqual([]);
  });

  it('takes the whole stack down when the launcher itself is SIGKILLed', async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'launcher-sigkill-'));
    const launcher = spawnOwned({
      name: 'launcher',
      command: process.execPath,
      args: [
        '--import',
        'tsx',
        'tools/launcher/main.ts',
        '--port',
        '0',
        '--quiet',
        '--private-redis',
        '--log-dir',
        logDir,
      ],
      cwd: repoRoot,
      env: { ...process.env, LOG_LEVEL: 'info' },
    });
    await until(
      'the launcher prints its banner',
      () => launcher.tail(200).some((l) => l.includes('fastloop is running')) || launcher.exitInfo !== undefined,
      180_000,
    );
    // A launcher that ended tells why (its StackStartError and the failing service's last words).
    if (launcher.exitInfo) process.stderr.write(`launcher ended early:\n${launcher.tail(80).join('\n')}\n`);
    expect(launcher.exitInfo).toBeUndefined();
    const stack = childrenOf(launcher.pid);
    expect(stack.filter((c) => c.exe === 'node').length).toBe(5);
    expect(stack.some((c) => c.exe.startsWith('redis-server'))).toBe(true);

    launcher.killNow();
    await launcher.exited;
    // Their logs end with the launcher (it wrote the files); what matters is that they exit, and
    // within seconds: each drains on its own and is killed if the drain overruns its grace period.
    await until('every service and the private Redis have exited', () => stack.every((c) => !isRunning(c.pid)), 60_000);
  });
});
