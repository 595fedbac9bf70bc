import { createHash } from 'node:crypto';

/** Who is calling: the tenant a key bills to, and a short non-secret id of the key for logs. */
export interface Principal {
  tenant: string;
  keyId: string;
  /** An admin key (FASTLOOP_ADMIN_API_KEYS): may read any tenant's usage. */
  admin?: boolean;
}

/**
 * Bearer API keys from config. Keys are held only as SHA-256 digests and looked up by the digest
 * of the presented key, so a lookup's timing says nothing about how much of a key matched.
 */
export class ApiKeyAuth {
  private readonly keys = new Map<string, Principal>();

  /**
   * @param spec comma-separated `key` or `key:tenant` entries.
   * @param adminSpec the same for admin keys (FASTLOOP_ADMIN_API_KEYS), which may also read every
   *   tenant's usage; default none.
   */
  constructor(spec: string, adminSpec = '') {
    this.add(spec, false);
    this.add(adminSpec, true);
    if (this.keys.size === 0) throw new Error('no API keys configured');
  }

  private add(spec: string, admin: boolean): void {
    for (const entry of spec
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const sep = entry.lastIndexOf(':');
      const key = sep > 0 ? entry.slice(0, sep) : entry;
      const tenant = sep > 0 ? entry.slice(sep + 1) : 'default';
      if (tenant === '') throw new Error(`FASTLOOP_API_KEYS: entry '${key.slice(0, 6)}…:' names an empty tenant`);
      const digest = sha256(key);
      this.keys.set(digest.toString('hex'), {
        tenant,
        keyId: digest.toString('hex').slice(0, 8),
        ...(admin ? { admin } : {}),
      });
    }
  }

  /** Returns the principal for an `Authorization` header value, or undefined. */
  authenticate(header: string | undefined): Principal | undefined {
    if (!header) return undefined;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return undefined;
    return this.keys.get(sha256(match[1]).toString('hex'));
  }
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}
