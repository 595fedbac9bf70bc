import type { billingV1 } from '@fastloop/proto';
import type { Redis } from 'ioredis';
import { utcDay } from './usage-job';

/** Counter fields of every ledger hash, in report order. */
export const LEDGER_FIELDS = ['requests', 'input_tokens', 'cached_tokens', 'output_tokens', 'reasoning_tokens'] as const;

export type LedgerField = (typeof LEDGER_FIELDS)[number];
export type LedgerTotals = Record<LedgerField, number>;

/** Default retention of the per-response "already applied" marker: 7 days. */
export const DEFAULT_DEDUPE_TTL_SECONDS = 7 * 24 * 3600;

/**
 * Tenant and model ids become parts of `:`-separated keys. Escaping `%` and `:` keeps ordinary ids
 * readable (`openai/gpt-oss-20b` stays as is) while `a:b` + `c` and `a` + `b:c` (model ids like
 * `gpt-oss:20b` exist) can never share a key.
 */
function keyPart(id: string): string {
  return id.replace(/%/g, '%25').replace(/:/g, '%3A');
}

/** Every Redis key the ledger owns. */
export const ledgerKeys = {
  /** Marker that one response was applied; expires after the dedupe TTL. */
  applied: (responseId: string) => `fastloop:billing:applied:${responseId}`,
  /** All-time totals of one tenant's use of one model. */
  total: (tenant: string, model: string) => `fastloop:ledger:${keyPart(tenant)}:${keyPart(model)}`,
  /** Totals of one UTC day (`YYYY-MM-DD`). */
  daily: (tenant: string, model: string, day: string) => `${ledgerKeys.total(tenant, model)}:${day}`,
  /** Set of tenant ids with any usage. Lives outside `fastloop:ledger:` so no tenant id can collide. */
  tenants: 'fastloop:ledger-index:tenants',
  /** Set of model ids one tenant used. */
  models: (tenant: string) => `fastloop:ledger-index:models:${keyPart(tenant)}`,
};

// One atomic step per record. Reads come first: Redis does not roll back a script's earlier writes
// when a later command errors, so a key of the wrong type must stop the script before it writes
// anything — otherwise a retry would count part of the record twice. The marker is written last
// for the same reason.
// KEYS: 1 marker, 2 total hash, 3 daily hash, 4 tenants set, 5 models set
// ARGV: 1 marker TTL s, 2 input, 3 cached, 4 output, 5 reasoning, 6 tenant, 7 model
const APPLY_USAGE_LUA = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local expected = { 'hash', 'hash', 'set', 'set' }
for i = 2, 5 do
  local t = redis.call('TYPE', KEYS[i])['ok']
  if t ~= 'none' and t ~= expected[i - 1] then
    return redis.error_reply('WRONGTYPE ledger key ' .. KEYS[i] .. ' holds a ' .. t)
  end
end
for i = 2, 3 do
  redis.call('HINCRBY', KEYS[i], 'requests', 1)
  redis.call('HINCRBY', KEYS[i], 'input_tokens', ARGV[2])
  redis.call('HINCRBY', KEYS[i], 'cached_tokens', ARGV[3])
  redis.call('HINCRBY', KEYS[i], 'output_tokens', ARGV[4])
  redis.call('HINCRBY', KEYS[i], 'reasoning_tokens', ARGV[5])
end
redis.call('SADD', KEYS[4], ARGV[6])
redis.call('SADD', KEYS[5], ARGV[7])
redis.call('SET', KEYS[1], '1', 'EX', ARGV[1])
return 1
`;

const COMMAND = 'fastloopApplyUsage';

type LedgerRedis = Redis & { [COMMAND](...keysAndArgs: (string | number)[]): Promise<number> };

/** What applying one record did. */
export type ApplyOutcome = 'applied' | 'duplicate';

export interface LedgerStoreOptions {
  /** How long a response id is remembered as applied, in seconds. Default 7 days. */
  dedupeTtlSeconds?: number;
}

/** Filters of a usage report; omitted ones mean "all". */
export interface UsageQuery {
  tenant?: string;
  model?: string;
  /** A UTC day `YYYY-MM-DD`: report that day's bucket instead of all-time totals. */
  day?: string;
  /** Most rows returned; default 1000. */
  maxRows?: number;
}

export interface UsageRow extends LedgerTotals {
  tenant: string;
  model: string;
  /** The day of a daily bucket, null for all-time totals. */
  day: string | null;
}

export interface UsageReport {
  rows: UsageRow[];
  /** True when more tenant/model pairs matched than `maxRows`. */
  truncated: boolean;
}

/**
 * The per-tenant, per-model usage ledger in Redis. `apply` is idempotent per response id for as
 * long as the marker lives, so a redelivered or duplicated job changes nothing.
 */
export class LedgerStore {
  private readonly redis: LedgerRedis;
  private readonly ttl: number;

  constructor(redis: Redis, options: LedgerStoreOptions = {}) {
    this.ttl = options.dedupeTtlSeconds ?? DEFAULT_DEDUPE_TTL_SECONDS;
    if (!Number.isInteger(this.ttl) || this.ttl < 1) throw new RangeError('dedupeTtlSeconds must be a positive integer');
    // defineCommand sends EVALSHA and falls back to EVAL after a restart flushed the script cache.
    if (!(COMMAND in redis)) redis.defineCommand(COMMAND, { numberOfKeys: 5, lua: APPLY_USAGE_LUA });
    this.redis = redis as unknown as LedgerRedis;
  }

  /** Adds one record to its all-time and daily buckets unless its response id was applied already. */
  async apply(record: billingV1.UsageRecord): Promise<ApplyOutcome> {
    const { tenant, model } = record;
    const applied = await this.redis[COMMAND](
      ledgerKeys.applied(record.responseId),
      ledgerKeys.total(tenant, model),
      ledgerKeys.daily(tenant, model, utcDay(record.completedAtMs)),
      ledgerKeys.tenants,
      ledgerKeys.models(tenant),
      this.ttl,
      record.inputTokens,
      record.cachedTokens,
      record.outputTokens,
      record.reasoningTokens,
      tenant,
      model,
    );
    return applied === 1 ? 'applied' : 'duplicate';
  }

  /** Reads the totals matching a query, sorted by tenant then model; pairs without usage are left out. */
  async report(query: UsageQuery = {}): Promise<UsageReport> {
    const maxRows = query.maxRows ?? 1000;
    const tenants = query.tenant !== undefined ? [query.tenant] : (await this.redis.smembers(ledgerKeys.tenants)).sort();
    const pairs: [string, string][] = [];
    let truncated = false;
    for (const tenant of tenants) {
      const models = query.model !== undefined ? [query.model] : (await this.redis.smembers(ledgerKeys.models(tenant))).sort();
      for (const model of models) pairs.push([tenant, model]);
      if (pairs.length > maxRows) {
        truncated = true;
        pairs.length = maxRows;
        break;
      }
    }
    const day = query.day ?? null;
    const pipeline = this.redis.pipeline();
    for (const [t, m] of pairs) pipeline.hgetall(day === null ? ledgerKeys.total(t, m) : ledgerKeys.daily(t, m, day));
    const replies = (await pipeline.exec()) ?? [];
    const rows: UsageRow[] = [];
    replies.forEach(([err, hash], i) => {
      if (err) throw err;
      const fields = hash as Record<string, string>;
      if (Object.keys(fields).length === 0) return;
      const [tenant, model] = pairs[i];
      rows.push({ tenant, model, day, ...toTotals(fields) });
    });
    return { rows, truncated };
  }
}

function toTotals(hash: Record<string, string>): LedgerTotals {
  const totals = {} as LedgerTotals;
  for (const f of LEDGER_FIELDS) totals[f] = Number(hash[f] ?? 0);
  return totals;
}
