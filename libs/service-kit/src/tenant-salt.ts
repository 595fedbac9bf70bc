import { createHash } from 'node:crypto';

const salts = new Map<string, string>();
const MAX_REMEMBERED = 10_000;

/**
 * The inference `cache_salt` of a tenant: prefix reuse on a worker is scoped to it, so one tenant's
 * `cached_tokens` never reveal what another tenant sent (what vLLM's `cache_salt` is for), and the
 * worker shares its generation slots per salt. A digest, not the name: workers never learn tenant
 * names (a worker configured with per-tenant shares digests the names it is given). Memoized
 * (bounded) since every turn asks.
 */
export function tenantCacheSalt(tenant: string): string {
  let salt = salts.get(tenant);
  if (salt === undefined) {
    salt = createHash('sha256').update(`fastloop-cache-salt\u0000${tenant}`).digest('base64url').slice(0, 22);
    if (salts.size >= MAX_REMEMBERED) salts.clear();
    salts.set(tenant, salt);
  }
  return salt;
}
