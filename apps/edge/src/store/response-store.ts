import { redisTenantTag, type RedisClient } from '@fastloop/service-kit';
import { ApiErrors, newId, type InputItem, type ResponseObject } from '@fastloop/protocol';
import type { ConversationState, RouteDecision } from '../turn/conversation-state';

/** What the store keeps per response besides the chain's item list. */
export interface StoredResponse {
  response: ResponseObject;
  tenant: string;
  /** Redis list holding the conversation's items (shared along a chain). */
  itemsKey: string;
  /** Items of the conversation up to and including this response's output. */
  itemsLength: number;
  /** Items before this response's output (what input_items lists). */
  inputLength: number;
  safetyState: string;
  safetyItems: number;
  /** Some entry was masked by a safety redaction: a reload must classify and mask again. */
  redacted?: boolean;
  route: RouteDecision;
  /** What the worker holds under this response's session key: prompt length and sampled tokens. */
  workerPrefixLength: number;
  sampled: number[];
}

// Every key of one tenant's stored responses carries the tenant's hash tag, so one save (a MULTI)
// and one delete (a script) stay within one Redis Cluster slot. A tenant's responses live on one
// shard, as its ledger does; tenants spread across shards.
/** One response's record. */
const responseKey = (tenant: string, id: string) => `fastloop:resp:${redisTenantTag(tenant)}:${id}`;
/** A conversation chain's item list, named after the response that started it. */
const itemsKeyOf = (tenant: string, rootId: string) => `fastloop:items:${redisTenantTag(tenant)}:${rootId}`;
/** Per item list: the stored responses that use it, scored by how many of its items they cover. */
const refsKeyOf = (itemsKey: string) => `fastloop:items-refs:${itemsKey}`;

/**
 * Appends new items to the chain's list only if it still ends where the parent's conversation
 * ends (the tip), so a turn writes O(new items); otherwise returns -1 and the caller branches.
 * KEYS[1] list; ARGV[1] expected length, ARGV[2] ttl seconds, ARGV[3..] items.
 */
const APPEND_IF_TIP = `
local len = redis.call('LLEN', KEYS[1])
if len ~= tonumber(ARGV[1]) then return -1 end
if #ARGV > 2 then redis.call('RPUSH', KEYS[1], unpack(ARGV, 3)) end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return len + #ARGV - 2`;

/**
 * Deletes a response and the content only it holds: its record, and the tail of its item list no
 * remaining response covers (the whole list, and its reference set, when none remains).
 * KEYS[1] response, KEYS[2] item list, KEYS[3] the list's references; ARGV[1] response id,
 * ARGV[2] the tenant's item pointer key prefix (pointers are in the tenant's slot, like the keys).
 */
const DELETE_RESPONSE = `
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[3], ARGV[1])
local top = redis.call('ZREVRANGE', KEYS[3], 0, 0, 'WITHSCORES')
local keep = 0
if #top > 0 then keep = tonumber(top[2]) end
-- The item_reference pointers of the items that go, if they still point into this list (decoded:
-- the list's key holds the tenant, whose characters JSON may escape).
for _, raw in ipairs(redis.call('LRANGE', KEYS[2], keep, -1)) do
  local ok, item = pcall(cjson.decode, raw)
  if ok and type(item) == 'table' and type(item.id) == 'string' then
    local ref = ARGV[2] .. item.id
    local at = redis.call('GET', ref)
    if at then
      local okAt, pointer = pcall(cjson.decode, at)
      if okAt and type(pointer) == 'table' and pointer[1] == KEYS[2] then redis.call('DEL', ref) end
    end
  end
end
if keep == 0 then
  redis.call('DEL', KEYS[2], KEYS[3])
else
  redis.call('LTRIM', KEYS[2], 0, keep - 1)
end
return 1`;

/**
 * Stored responses (`store: true`) in Redis with a TTL: one hash per response and one append-only
 * item list per conversation chain. Writes happen after the terminal event and never fail a turn:
 * errors are logged and counted.
 */
export class ResponseStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly ttlSeconds: number,
  ) {
    redis.defineCommand('fastloopAppendIfTip', { numberOfKeys: 1, lua: APPEND_IF_TIP });
    redis.defineCommand('fastloopDeleteResponse', { numberOfKeys: 3, lua: DELETE_RESPONSE });
  }

  /** Saves a finished response; items from `newItemsFrom` on are new since its parent. */
  async save(
    state: ConversationState,
    parent: StoredResponse | undefined,
    newItemsFrom: number,
  ): Promise<StoredResponse> {
    const items = state.items;
    let itemsKey = parent?.itemsKey ?? itemsKeyOf(state.tenant, state.response.id);
    let from = parent ? newItemsFrom : 0;
    let expected = parent ? parent.itemsLength : 0;
    const withIds = items.slice(from).map(withId);
    // The new items' ids are minted once, so a branch's copy and the item pointers agree on them.
    const encoded = (start: number) =>
      [...items.slice(start, from).map(withId), ...withIds].map((item) => JSON.stringify(item));
    const append = (
      this.redis as unknown as { fastloopAppendIfTip(k: string, ...a: (string | number)[]): Promise<number> }
    ).fastloopAppendIfTip.bind(this.redis);
    let result = await append(itemsKey, expected, this.ttlSeconds, ...encoded(from));
    if (result === -1) {
      // A branch: the chain's list moved on past the parent; this response gets its own list.
      itemsKey = itemsKeyOf(state.tenant, state.response.id);
      from = 0;
      expected = 0;
      result = await append(itemsKey, 0, this.ttlSeconds, ...encoded(0));
    }
    const record: StoredResponse = {
      response: state.response,
      tenant: state.tenant,
      itemsKey,
      itemsLength: items.length,
      inputLength: items.length - (state.response.output?.length ?? 0),
      safetyState: Buffer.from(state.safetyState).toString('base64'),
      safetyItems: state.safetyItems,
      ...(state.redacted ? { redacted: true } : {}),
      route: state.route,
      workerPrefixLength: state.workerPrefixLength,
      sampled: [...state.sampled],
    };
    const refs = refsKeyOf(itemsKey);
    const write = this.redis
      .multi()
      .zadd(refs, record.itemsLength, state.response.id)
      .expire(refs, this.ttlSeconds)
      .set(responseKey(state.tenant, state.response.id), JSON.stringify(record), 'EX', this.ttlSeconds);
    // Only this turn's items get (or move) a pointer: O(new items) per save. A branch's copy of
    // older items keeps the pointers to the parent's list, which holds the same items.
    const firstNew = items.length - withIds.length;
    withIds.forEach((item, i) => {
      write.set(
        itemRefKey(state.tenant, item.id ?? ''),
        JSON.stringify([itemsKey, firstNew + i]),
        'EX',
        this.ttlSeconds,
      );
    });
    await write.exec();
    return record;
  }

  /** A stored item by id, if the caller's tenant stored it (for `item_reference`). */
  async findItem(id: string, tenant: string): Promise<InputItem | undefined> {
    const ref = await this.redis.get(itemRefKey(tenant, id)).catch(unavailable);
    if (!ref) return undefined;
    const [itemsKey, index] = JSON.parse(ref) as [string, number];
    const raw = await this.redis.lindex(itemsKey, index).catch(unavailable);
    if (!raw) return undefined;
    const item = JSON.parse(raw) as InputItem;
    return item.id === id ? item : undefined;
  }

  async get(id: string, tenant: string): Promise<StoredResponse | undefined> {
    const raw = await this.redis.get(responseKey(tenant, id)).catch(unavailable);
    if (!raw) return undefined;
    const record = JSON.parse(raw) as StoredResponse;
    // Another tenant's response is indistinguishable from a missing one.
    return record.tenant === tenant ? record : undefined;
  }

  /** Items [start, end) of a stored conversation. */
  async items(record: StoredResponse, start: number, end: number): Promise<InputItem[]> {
    if (end <= start) return [];
    const raw = await this.redis.lrange(record.itemsKey, start, end - 1).catch(unavailable);
    return raw.map((s) => JSON.parse(s) as InputItem);
  }

  async delete(id: string, tenant: string): Promise<boolean> {
    const record = await this.get(id, tenant);
    if (!record) return false;
    const del = (
      this.redis as unknown as { fastloopDeleteResponse(...a: string[]): Promise<number> }
    ).fastloopDeleteResponse.bind(this.redis);
    await del(responseKey(tenant, id), record.itemsKey, refsKeyOf(record.itemsKey), id, itemRefPrefix(tenant)).catch(
      unavailable,
    );
    return true;
  }
}

/** Reads that fail because Redis is away are a 503 for the client, never a hang or a 500. */
function unavailable(err: unknown): never {
  // Never the Redis error's text: it names the server's address (`connect ECONNREFUSED 10.0.0.5:6379`).
  throw Object.assign(ApiErrors.dependencyUnavailable('store'), { cause: err });
}

/** input_items lists every item with an id; items the client sent without one get one. */
function withId(item: InputItem): InputItem {
  if (item.id) return item;
  const prefix =
    item.type === 'function_call'
      ? 'fc'
      : item.type === 'reasoning'
        ? 'rs'
        : item.type === 'custom_tool_call'
          ? 'ctc'
          : 'msg';
  return { ...item, id: newId(prefix) };
}

/**
 * Per (tenant, item id): where the item lives (`itemsKey`, index), for `item_reference`. The tenant's
 * part of the key; the raw id follows (the delete script builds keys the same way).
 */
function itemRefPrefix(tenant: string): string {
  return `fastloop:itemref:${redisTenantTag(tenant)}:`;
}

function itemRefKey(tenant: string, id: string): string {
  return itemRefPrefix(tenant) + id;
}
