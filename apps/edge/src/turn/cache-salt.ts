import { createHash } from 'node:crypto';

const salts = new Map<string, string>();
const MAX_REMEMBERED = 10_000;

/**
 * The inference `cache_salt` of a tenant: prefix reuse on a worker is scoped to it, so one tenant's
 * `cached_tokens` never reveal what another tenant sent (what vLLM's `cache_salt` is for). A digest,
 * not the name: workers never learn tenant names. Memoized (bounded) since every turn asks.
 */
export function cacheSaltOf(tenant: string): string {
  let salt = salts.get(tenant);
  if (salt === undefined) {
    salt = createHash('sha256').update(`fastloop-cache-salt\u0000${tenant}`).digest('base64url').slice(0, 22);
    if (salts.size >= MAX_REMEMBERED) salts.clear();
    salts.set(tenant, salt);
  }
  return salt;
}
