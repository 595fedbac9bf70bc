import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'fl1';
const KID = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Sealed reasoning: the `encrypted_content` of a reasoning output item, which a stateless client
 * (`store: false`, `include: ["reasoning.encrypted_content"]`) sends back so the model keeps its
 * chain of thought. AES-256-GCM under a deployment key, with the tenant as additional data, so a
 * blob opens only for the tenant it was made for and any change to it is detected.
 *
 * Wire format (version 1): `fl1.<kid>.<base64url(iv ‖ tag ‖ ciphertext)>`; the version and the key
 * id are bound into the additional data too.
 */
export class ReasoningSeal {
  private readonly keys: ReadonlyMap<string, Buffer>;
  private readonly current: { kid: string; key: Buffer };

  /** `keys` in order: the first seals, all open (so a key can be rotated in before it seals). */
  constructor(keys: readonly { kid: string; key: Buffer }[]) {
    if (keys.length === 0) throw new Error('ReasoningSeal needs at least one key');
    for (const { kid, key } of keys) {
      if (!KID.test(kid)) throw new Error(`reasoning key id '${kid}' must match ${KID}`);
      if (key.length !== KEY_BYTES)
        throw new Error(`reasoning key '${kid}' must be ${KEY_BYTES} bytes, got ${key.length}`);
    }
    this.keys = new Map(keys.map((k) => [k.kid, k.key]));
    this.current = keys[0];
  }

  /**
   * `purpose` binds the blob to one use (compaction summaries: `compaction`), so a blob sealed for
   * one field does not open in another; reasoning has none, as blobs already handed out were sealed.
   */
  seal(text: string, tenant: string, purpose?: SealPurpose): string {
    const { kid, key } = this.current;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(aad(kid, tenant, purpose));
    const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return `${VERSION}.${kid}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  /** The sealed text; throws {@link SealError} for a blob that is malformed, altered, foreign or under an unknown key. */
  open(blob: string, tenant: string, purpose?: SealPurpose): string {
    const parts = blob.split('.');
    if (parts.length !== 3 || parts[0] !== VERSION)
      throw new SealError('is not fastloop sealed state (unknown format or version)');
    const [, kid, payload] = parts;
    const key = this.keys.get(kid);
    if (!key) throw new SealError(`was sealed with an unknown key ('${kid}')`);
    const raw = Buffer.from(payload, 'base64url');
    if (raw.length < IV_BYTES + TAG_BYTES || raw.toString('base64url') !== payload)
      throw new SealError('is truncated or malformed');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(aad(kid, tenant, purpose));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SealError('failed authentication (altered, or made for another organization)');
    }
  }
}

/** A blob that does not open; the message completes "The encrypted content …". */
export class SealError extends Error {}

/**
 * Parses `EDGE_REASONING_KEYS`: comma-separated `kid:base64key` entries (32-byte keys). Throws a
 * message naming the bad entry.
 */
export function parseReasoningKeys(spec: string): { kid: string; key: Buffer }[] {
  return spec
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const at = entry.indexOf(':');
      if (at <= 0) throw new Error(`EDGE_REASONING_KEYS entry '${entry.slice(0, 12)}…' is not kid:base64key`);
      return { kid: entry.slice(0, at), key: Buffer.from(entry.slice(at + 1), 'base64') };
    });
}

/**
 * Development-only key, used when `EDGE_REASONING_KEYS` is unset (main.ts logs a warning): anyone
 * who knows it can read and forge reasoning state.
 */
export const DEV_REASONING_KEYS = `dev:${Buffer.alloc(KEY_BYTES, 'fastloop-dev-reasoning').toString('base64')}`;

/** What a sealed blob is for, bound into its additional data (reasoning blobs have none). */
export type SealPurpose = 'compaction';

function aad(kid: string, tenant: string, purpose: SealPurpose | undefined): Buffer {
  const base = `${VERSION}\0${kid}\0${tenant}`;
  return Buffer.from(purpose === undefined ? base : `${base}\0${purpose}`, 'utf8');
}
