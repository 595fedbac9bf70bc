import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireOutboxDirectory } from './outbox-directory';
import { formatProcessId, LOCAL_PROCESSES, parseProcessId, type ProcessId } from './process-identity';

describe('acquireOutboxDirectory', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'fastloop-outbox-dir-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** A folder another process left, with one record file and a lock naming `owner` (raw text). */
  const leave = (name: string, lock: string): void => {
    mkdirSync(join(root, name));
    writeFileSync(join(root, name, 'owner.lock'), lock);
    writeFileSync(join(root, name, 'usage-outbox.wal-1.jsonl'), '{"responseId":"resp_1"}\n');
  };

  it('names this process by pid, start time and boot id in its lock', () => {
    const dir = acquireOutboxDirectory(root);
    const owner = parseProcessId(readFileSync(join(dir.dir, 'owner.lock'), 'utf8'));
    expect(owner).toEqual(LOCAL_PROCESSES.self());
    expect(owner?.pid).toBe(process.pid);
    if (existsSync('/proc/self/stat')) {
      expect(owner?.startTime).toBeGreaterThan(0);
      expect(owner?.bootId).toMatch(/^[0-9a-f-]{36}$/);
    }
    dir.release();
  });

  it("adopts a folder whose owner had this very pid but was another process (a restarted container's pid 1)", () => {
    const self = LOCAL_PROCESSES.self();
    if (self.startTime === undefined) return; // no /proc: only pids are known
    leave('1-predecessor', formatProcessId({ ...self, startTime: self.startTime - 1 }));
    const dir = acquireOutboxDirectory(root);
    expect(dir.adopted).toBe(1);
    expect(existsSync(join(root, '1-predecessor'))).toBe(false);
    dir.release();
  });

  it('adopts a folder from before a reboot, whatever its pid', () => {
    const self = LOCAL_PROCESSES.self();
    if (self.bootId === undefined) return;
    leave('1-before-reboot', formatProcessId({ ...self, bootId: '00000000-0000-0000-0000-000000000000' }));
    expect(acquireOutboxDirectory(root).adopted).toBe(1);
  });

  it('leaves the folder of a live process alone, and adopts it once that process is gone', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const pid = child.pid as number;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const startTime = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
      const live: ProcessId = { ...LOCAL_PROCESSES.self(), pid, startTime };
      leave(`${pid}-live`, formatProcessId(live));
      leave(`${pid}-old-format`, String(pid));
      const first = acquireOutboxDirectory(root);
      expect(first.adopted).toBe(0);
      first.release();
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const second = acquireOutboxDirectory(root);
      expect(second.adopted).toBe(2);
      expect(readdirSync(second.dir).filter((f) => f.endsWith('.jsonl'))).toHaveLength(2);
      second.release();
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('parseProcessId', () => {
  it('reads this format and the older bare pid, and nothing else', () => {
    expect(parseProcessId('{"pid":12,"startTime":345,"bootId":"b"}')).toEqual({ pid: 12, startTime: 345, bootId: 'b' });
    expect(parseProcessId('77\n')).toEqual({ pid: 77 });
    expect(parseProcessId('{"pid":0}')).toBeUndefined();
    expect(parseProcessId('garbage')).toBeUndefined();
  });
});
