import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshLogDir, pruneStaleLogDirs, STALE_LOG_DIR_MS } from './log-dirs';

describe('stack log folders', () => {
  let parent: string;
  beforeEach(() => (parent = mkdtempSync(join(tmpdir(), 'log-dirs-spec-'))));
  afterEach(() => rmSync(parent, { recursive: true, force: true }));

  /** A log folder whose folder and files were last written `ageMs` ago, but `freshFile` (if named) now. */
  function folder(name: string, ageMs: number, freshFile?: string): string {
    const dir = join(parent, name);
    mkdirSync(dir);
    const then = new Date(Date.now() - ageMs);
    writeFileSync(join(dir, 'edge.log'), 'old line\n');
    utimesSync(join(dir, 'edge.log'), then, then);
    if (freshFile) writeFileSync(join(dir, freshFile), 'still writing\n');
    utimesSync(dir, then, then);
    return dir;
  }

  it('removes the folders of stacks nothing wrote to for a day, and keeps the rest', () => {
    const stale = folder('fastloop-stack-old', STALE_LOG_DIR_MS + 60_000);
    const recent = folder('fastloop-stack-new', 60_000);
    const live = folder('fastloop-stack-live', STALE_LOG_DIR_MS + 60_000, 'billing.log');
    const other = folder('not-a-stack', STALE_LOG_DIR_MS + 60_000);
    pruneStaleLogDirs(parent);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(recent)).toBe(true);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(other)).toBe(true);
  });

  it('gives each stack a new folder of its own, pruning as it goes', () => {
    const stale = folder('fastloop-stack-old', STALE_LOG_DIR_MS + 60_000);
    const a = freshLogDir(parent);
    const b = freshLogDir(parent);
    expect(a).not.toBe(b);
    expect(existsSync(a) && existsSync(b)).toBe(true);
    expect(existsSync(stale)).toBe(false);
  });
});
