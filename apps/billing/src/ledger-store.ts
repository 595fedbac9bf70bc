import { redisKeyPart, redisTenantTag, type RedisClient } from '@fastloop/service-kit';
import type { billingV1 } from '@fastloop/proto';
import { utcDay } from './usage-job';

/** Counter fields of every ledger hash, in report order. */
export const LEDGER_FIELDS = [
  'requests',
  'input_tokens',
  'cached_tokens',
  'output_tokens',
  'reasoning_tokens',
] as const;

export type LedgerField = (typeof LEDGER_FIELDS)[number];
export type LedgerTotals = Record<LedgerField, number>;

/** Default retention of the per-response "already applied" marker: 7 days. */
export const DEFAULT_DEDUPE_TTL_SECONDS = 7 * 24 * 3600;

// Ids become key parts escaped by service-kit (`redisKeyPart`), and every key one apply script
// touches carries the tenant's hash tag (`redisTenantTag`), so they share a Redis Cluster slot.
const keyPart = redisKeyPart;
const tenantTag = redisTenantTag;

/** Every Redis key the ledger owns. */
export const ledgerKeys = {
  /** Marker that one response was applied; expires after the dedupe TTL. In the tenant's slot. */
  applied: (tenant: string, responseId: string) => `fastloop:billing:applied:${tenantTag(tenant)}:${responseId}`,
  /** All-time totals of one tenant's use of one model. */
  total: (tenant: string, model: string) => `fastloop:ledger:${tenantTag(tenant)}:${keyPart(model)}`,
  /** Totals of one UTC day (`YYYY-MM-DD`). */
  daily: (tenant: string, model: string, day: string) => `${ledgerKeys.total(tenant, model)}:${day}`,
  /**
   * Set of tenant ids with any usage. Lives outside `fastloop:ledger:` so no tenant id can collide,
   * and outside the apply script (its own slot): SADD is idempotent, so it runs before the script.
   */
  tenants: 'fastloop:ledger-index:tenants',
  /** Set of model ids one tenant used. */
  models: (tenant: string) => `fastloop:ledger-index:models:${tenantTag(tenant)}`,
};

// One atomic step per record. Reads come first: RedisClient does not roll back a script's earlier writes
// when a later command errors, so a key of the wrong type must stop the script before it writes
// anything — otherwise a retry would count part of the record twice. The marker is written last
// for the same reason.
// KEYS (one hash slot: the tenant's tag): 1 marker, 2 total hash, 3 daily hash, 4 models set
// ARGV: 1 marker TTL s, 2 input, 3 cached, 4 output, 5 reasoning, 6 model
const APPLY_USAGE_LUA = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local expected = { 'hash', 'hash', 'set' }
for i = 2, 4 do
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
redis.call('SET', KEYS[1], '1', 'EX', ARGV[1])
return 1
`;

const COMMAND = 'fastloopApplyUsage';

/** A pipeline with the apply script defined on its client (defineCommand). */
type LedgerPipeline = ReturnType<RedisClient['pipeline']> & { [COMMAND](...keysAndArgs: (string | number)[]): unknown };

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
  /**
   * UTC days `YYYY-MM-DD`, both included: one row per day with usage instead of all-time totals
   * (both or neither; at most {@link MAX_REPORT_DAYS} days).
   */
  start?: string;
  end?: string;
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
  private readonly redis: RedisClient;
  private readonly ttl: number;

  constructor(redis: RedisClient, options: LedgerStoreOptions = {}) {
    this.ttl = options.dedupeTtlSeconds ?? DEFAULT_DEDUPE_TTL_SECONDS;
    if (!Number.isInteger(this.ttl) || this.ttl < 1)
      throw new RangeError('dedupeTtlSeconds must be a positive integer');
    // defineCommand sends EVALSHA and falls back to EVAL after a restart flushed the script cache.
    if (!(COMMAND in redis)) redis.defineCommand(COMMAND, { numberOfKeys: 4, lua: APPLY_USAGE_LUA });
    this.redis = redis;
  }

  /** Adds one record to its all-time and daily buckets unless its response id was applied already. */
  async apply(record: billingV1.UsageRecord): Promise<ApplyOutcome> {
    return (await this.applyAll([record]))[0];
  }

  /**
   * {@link apply} for each of `records`, in order, in one round trip per tenant: the tenant index
   * first (one SADD of every tenant), then one pipeline of the apply scripts per tenant (its keys
   * share one Cluster slot). A batch job's records cost two writes to Redis instead of two
   * commands each. A failed script rejects the whole call; the scripts that ran stay applied and
   * their markers make the retry skip them.
   */
  async applyAll(records: readonly billingV1.UsageRecord[]): Promise<ApplyOutcome[]> {
    if (records.length === 0) return [];
    const byTenant = new Map<string, number[]>();
    for (let i = 0; i < records.length; i++) {
      const at = byTenant.get(records[i].tenant);
      if (at) at.push(i);
      else byTenant.set(records[i].tenant, [i]);
    }
    // Indexing the tenant first is harmless if a script then fails: the report skips empty pairs.
    await this.redis.sadd(ledgerKeys.tenants, ...byTenant.keys());
    const outcomes: ApplyOutcome[] = new Array(records.length);
    await Promise.all(
      [...byTenant.values()].map(async (indexes) => {
        const pipeline = this.redis.pipeline() as LedgerPipeline;
        for (const i of indexes) pipeline[COMMAND](...this.scriptArgs(records[i]));
        const replies = (await pipeline.exec()) ?? [];
        if (replies.length !== indexes.length) throw new Error('ledger pipeline: a reply is missing');
        for (let k = 0; k < indexes.length; k++) {
          const [err, applied] = replies[k];
          if (err) throw err;
          outcomes[indexes[k]] = applied === 1 ? 'applied' : 'duplicate';
        }
      }),
    );
    return outcomes;
  }

  private scriptArgs(record: billingV1.UsageRecord): (string | number)[] {
    const { tenant, model } = record;
    return [
      ledgerKeys.applied(tenant, record.responseId),
      ledgerKeys.total(tenant, model),
      ledgerKeys.daily(tenant, model, utcDay(record.completedAtMs)),
      ledgerKeys.models(tenant),
      this.ttl,
      record.inputTokens,
      record.cachedTokens,
      record.outputTokens,
      record.reasoningTokens,
      model,
    ];
  }

  /**
   * Reads the totals matching a query, sorted by tenant, model, then day; pairs and days without
   * usage are left out. Reads are pipelined per tenant (one hash slot each, so Cluster-safe).
   */
  async report(query: UsageQuery = {}): Promise<UsageReport> {
    const maxRows = query.maxRows ?? 1000;
    const days = reportDays(query);
    const tenants =
      query.tenant !== undefined ? [query.tenant] : (await this.redis.smembers(ledgerKeys.tenants)).sort();
    const rows: UsageRow[] = [];
    for (const tenant of tenants) {
      const models =
        query.model !== undefined ? [query.model] : (await this.redis.smembers(ledgerKeys.models(tenant))).sort();
      const buckets: [string, string | null][] = models.flatMap((m) =>
        days.map((d): [string, string | null] => [m, d]),
      );
      if (buckets.length === 0) continue;
      const pipeline = this.redis.pipeline();
      for (const [m, d] of buckets)
        pipeline.hgetall(d === null ? ledgerKeys.total(tenant, m) : ledgerKeys.daily(tenant, m, d));
      const replies = (await pipeline.exec()) ?? [];
      for (let i = 0; i < replies.length; i++) {
        const [err, hash] = replies[i];
        if (err) throw err;
        const fields = hash as Record<string, string>;
        if (Object.keys(fields).length === 0) continue;
        if (rows.length === maxRows) return { rows, truncated: true };
        rows.push({ tenant, model: buckets[i][0], day: buckets[i][1], ...toTotals(fields) });
      }
    }
    return { rows, truncated: false };
  }
}

/** Longest `start`..`end` range one report covers. */
export const MAX_REPORT_DAYS = 366;
const DAY_MS = 24 * 3600 * 1000;

/** The buckets a query reads: null = all-time totals, else each UTC day of the range. */
function reportDays(query: UsageQuery): (string | null)[] {
  if (query.start === undefined && query.end === undefined) return [query.day ?? null];
  if (query.start === undefined || query.end === undefined) throw new RangeError('start and end go together');
  const from = Date.parse(`${query.start}T00:00:00Z`);
  const to = Date.parse(`${query.end}T00:00:00Z`);
  if (!(to >= from)) throw new RangeError('end is before start');
  if ((to - from) / DAY_MS + 1 > MAX_REPORT_DAYS)
    throw new RangeError(`a report covers at most ${MAX_REPORT_DAYS} days`);
  const days: string[] = [];
  for (let t = from; t <= to; t += DAY_MS) days.push(utcDay(t));
  return days;
}

function toTotals(hash: Record<string, string>): LedgerTotals {
  const totals = {} as LedgerTotals;
  for (const f of LEDGER_FIELDS) totals[f] = Number(hash[f] ?? 0);
  return totals;
}
