import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'fastloop-stack-';

/** How long a stack's own log folder is kept for reading after the stack is gone. */
export const STALE_LOG_DIR_MS = 24 * 60 * 60 * 1000;

/**
 * A fresh folder for a stack's logs under the OS temp dir (when the caller names none), after
 * removing the folders of earlier stacks that nothing has written to for {@link STALE_LOG_DIR_MS}.
 * Logs outlive their stack so that a failure can be read afterwards; without the pruning every
 * test stack (hundreds a CI run) would leave its folder behind for good.
 */
export function freshLogDir(parent = tmpdir(), now = Date.now()): string {
  pruneStaleLogDirs(parent, now);
  return mkdtempSync(join(parent, PREFIX));
}

/** Removes `fastloop-stack-*` folders under `parent` whose newest entry is older than the limit. Best effort. */
export function pruneStaleLogDirs(parent: string, now = Date.now()): void {
  let names: string[];
  try {
    names = readdirSync(parent).filter((n) => n.startsWith(PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const dir = join(parent, name);
    try {
      // A running stack's services append to files inside; the folder's own mtime does not move then.
      const newest = [dir, ...readdirSync(dir).map((f) => join(dir, f))]
        .map((p) => statSync(p).mtimeMs)
        .reduce((a, b) => Math.max(a, b), 0);
      if (now - newest > STALE_LOG_DIR_MS) rmSync(dir, { recursive: true, force: true });
    } catch {
      // Gone already, or another user's: not ours to worry about.
    }
  }
}
