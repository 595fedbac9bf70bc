import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  formatProcessId,
  LOCAL_PROCESSES,
  parseProcessId,
  type ProcessId,
  type ProcessTable,
} from './process-identity';

const LOCK_NAME = 'owner.lock';
/** Files a dead owner may leave: WAL segments, the active spill file and replay files. */
const RECORD_FILE = /\.jsonl$/;
/** Adopted files become replay files of the new owner (see OutboxSpillFile.claim). */
const REPLAY_PREFIX = 'usage-outbox.replay-';

/** One process's own outbox folder under the shared root, held while the process lives. */
export interface OutboxDirectory {
  /** The folder this process writes; no other live process touches it. */
  readonly dir: string;
  /** Record files taken over from dead owners (now replay files in `dir`). */
  readonly adopted: number;
  /** Gives the folder up (removes the lock, and the folder if empty). Idempotent. */
  release(): void;
}

/**
 * Claims a fresh folder `<root>/<pid>-<random>` with a lock file naming this process (pid, start
 * time and boot id: see process-identity.ts), then adopts the folders of owners that are gone (no
 * lock, or a lock whose process no longer runs, including a predecessor that had the same pid, as
 * a restarted container's pid 1 has) and record files a pre-per-process layout left directly in
 * the root: their files are moved into the new folder as replay files. A rename is atomic, so of
 * two processes starting together exactly one adopts a given folder or file, and a live process's
 * records are never replayed by another.
 */
export function acquireOutboxDirectory(root: string, processes: ProcessTable = LOCAL_PROCESSES): OutboxDirectory {
  mkdirSync(root, { recursive: true });
  const self = processes.self();
  const id = `${self.pid}-${randomBytes(4).toString('hex')}`;
  // Staged under a dot-name (never adopted) so the folder never exists without its lock.
  const staging = join(root, `.new-${id}`);
  mkdirSync(staging);
  writeFileSync(join(staging, LOCK_NAME), formatProcessId(self));
  const dir = join(root, id);
  renameSync(staging, dir);
  let adopted = 0;
  for (const name of readdirSync(root)) {
    if (name.startsWith('.') || name === id) continue;
    const path = join(root, name);
    if (isDirectory(path)) adopted += adoptFolder(path, name, dir, processes);
    else if (RECORD_FILE.test(name)) adopted += moveRecordFile(path, dir, `legacy-${name}`);
  }
  let released = false;
  return {
    dir,
    adopted,
    release() {
      if (released) return;
      released = true;
      try {
        unlinkSync(join(dir, LOCK_NAME));
        if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true, force: true });
      } catch {
        // Left as an orphan: the next process adopts it.
      }
    },
  };
}

function adoptFolder(path: string, name: string, into: string, processes: ProcessTable): number {
  const owner = readOwner(path);
  if (owner !== undefined && processes.isRunning(owner)) return 0;
  // Take the whole folder first (atomic): a racing process gets ENOENT and moves on.
  const taken = join(into, `.adopting-${name}`);
  try {
    renameSync(path, taken);
  } catch {
    return 0;
  }
  let moved = 0;
  for (const file of readdirSync(taken))
    if (RECORD_FILE.test(file)) moved += moveRecordFile(join(taken, file), into, `${name}-${file}`);
  rmSync(taken, { recursive: true, force: true });
  return moved;
}

function moveRecordFile(from: string, into: string, tag: string): number {
  try {
    // Sorts after nothing in particular: replay order does not matter (job ids deduplicate).
    renameSync(from, join(into, `${REPLAY_PREFIX}0-adopted-${tag.replace(/\.jsonl$/, '')}.jsonl`));
    return 1;
  } catch {
    return 0;
  }
}

function readOwner(dir: string): ProcessId | undefined {
  try {
    return parseProcessId(readFileSync(join(dir, LOCK_NAME), 'utf8'));
  } catch {
    return undefined;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
