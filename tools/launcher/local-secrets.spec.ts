import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installationReasoningKey, reasoningKeyEnv, REASONING_KEY_FILE } from './local-secrets';

describe('installationReasoningKey', () => {
  let dir: string;
  beforeEach(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'fastloop-secrets-')), '.fastloop');
  });
  afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

  it('creates a random 32-byte key once, readable by this user only, and reuses it', () => {
    const key = installationReasoningKey(dir);
    expect(key).toMatch(/^local-[0-9a-f]{8}:[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(key.split(':')[1], 'base64')).toHaveLength(32);
    expect(statSync(join(dir, REASONING_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(installationReasoningKey(dir)).toBe(key);
    const other = join(dir, '..', 'other');
    expect(installationReasoningKey(other)).not.toBe(key);
  });

  it('tightens a loosened file, and refuses one that holds no key', () => {
    const key = installationReasoningKey(dir);
    chmodSync(join(dir, REASONING_KEY_FILE), 0o644);
    expect(installationReasoningKey(dir)).toBe(key);
    expect(statSync(join(dir, REASONING_KEY_FILE)).mode & 0o777).toBe(0o600);
    writeFileSync(join(dir, REASONING_KEY_FILE), 'not a key');
    expect(() => installationReasoningKey(dir)).toThrow(/does not hold a reasoning key/);
  });

  it('leaves EDGE_REASONING_KEYS alone when the caller set it', () => {
    expect(reasoningKeyEnv(dir, { EDGE_REASONING_KEYS: 'k1:abc' })).toEqual({});
    const env = reasoningKeyEnv(dir, {});
    expect(env.EDGE_REASONING_KEYS).toBe(readFileSync(join(dir, REASONING_KEY_FILE), 'utf8').trim());
  });
});
