import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, openSync, readFileSync, statSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';

/** The file under `.fastloop/` holding this installation's reasoning key. */
export const REASONING_KEY_FILE = 'reasoning-key';

/** `kid:base64key` with a 32-byte key, as EDGE_REASONING_KEYS wants. */
const KEY_LINE = /^[A-Za-z0-9_-]{1,32}:[A-Za-z0-9+/]{43}=$/;

/**
 * The key `npm start` seals reasoning `encrypted_content` with: random per installation, created
 * once in `<dir>/reasoning-key` with mode 0600 (only this user can read it) and reused after, so
 * sealed reasoning from an earlier run still opens. Without it the edge falls back to the public
 * development key, with which anyone could forge `encrypted_content` for a local stack.
 */
export function installationReasoningKey(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, REASONING_KEY_FILE);
  const created = `local-${randomBytes(4).toString('hex')}:${randomBytes(32).toString('base64')}`;
  try {
    // `wx`: of two launchers starting together, one creates the file and the other reads it.
    const fd = openSync(path, 'wx', 0o600);
    try {
      writeSync(fd, `${created}\n`);
    } finally {
      closeSync(fd);
    }
    return created;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  // Tighten a file someone loosened; a key others could read is still better replaced by hand.
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  const line = readFileSync(path, 'utf8').trim();
  if (!KEY_LINE.test(line))
    throw new Error(`${path} does not hold a reasoning key (kid:base64 of 32 bytes): delete it to get a new one`);
  return line;
}

/**
 * The environment `npm start` adds for the edge: this installation's reasoning key, unless the
 * caller set EDGE_REASONING_KEYS (then theirs is used as is).
 */
export function reasoningKeyEnv(dir: string, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  if (env.EDGE_REASONING_KEYS?.trim()) return {};
  return { EDGE_REASONING_KEYS: installationReasoningKey(dir) };
}
