import { createHash } from 'node:crypto';
import type { routerV1 } from '@fastloop/proto';
import type { ResponseCreateRequest } from '@fastloop/protocol';
import { cacheSaltOf } from './cache-salt';
import type { TurnRequest } from './turn-deps';

const prefixKeys = new WeakMap<object, string>();

/**
 * The conversation root of a request, for placement (router.proto / inference.proto `prefix_key`):
 * the client's `prompt_cache_key` when it sends one (OpenAI's grouping of requests that share a
 * prefix), else a digest of its instructions and tools (the shared system prompt), else '' .
 * Computed once per request body (O(header)), and only where a Route or a fresh session needs it.
 */
export function prefixKeyOf(body: Pick<ResponseCreateRequest, 'prompt_cache_key' | 'instructions' | 'tools'>): string {
  let key = prefixKeys.get(body);
  if (key !== undefined) return key;
  if (body.prompt_cache_key) key = `k:${body.prompt_cache_key}`;
  else if (body.instructions || (body.tools && body.tools.length > 0))
    key = `h:${createHash('sha256')
      .update(JSON.stringify([body.instructions ?? null, body.tools ?? null]))
      .digest('base64url')
      .slice(0, 22)}`;
  else key = '';
  prefixKeys.set(body, key);
  return key;
}

/**
 * The conversation's root for a turn's Route request: a continuation keeps its conversation's
 * (as a Generate continuation does) instead of digesting the instructions and tools it resends
 * every turn again (~0.1 ms a turn with ten tools in bench/load's profile); the client's
 * `prompt_cache_key`, when sent, is taken as it is.
 */
export function conversationRootOf(req: Pick<TurnRequest, 'body' | 'previous'>): string {
  const { body, previous } = req;
  if (!body.prompt_cache_key && previous?.prefixKey !== undefined) return previous.prefixKey;
  return prefixKeyOf(body);
}

/** The affinity key of the `hash` policy: prompt_cache_key, else previous_response_id. */
export function affinityKeyOf(req: TurnRequest): string {
  return req.body.prompt_cache_key ?? req.body.previous_response_id ?? '';
}

/**
 * A turn's Route request with its placement hints: the session it continues and where the
 * connection's state says it lives, its root, service tier and expected output, and the workers
 * not to pick (a retry after one failed before the first token).
 */
export function routeRequestOf(
  req: TurnRequest,
  model: string,
  excludeWorkerIds: readonly string[],
): routerV1.RouteRequest {
  const { body, principal, previous } = req;
  return {
    model,
    tenant: principal.tenant,
    affinityKey: affinityKeyOf(req),
    sessionKey: body.previous_response_id ?? '',
    cacheSalt: cacheSaltOf(principal.tenant),
    sessionWorkerId: previous?.route.workerId ?? '',
    // What that worker kept: the previous prompt and every token it sampled (0 for a state from the store).
    sessionTokens:
      previous && previous.workerPrefixLength > 0 ? previous.workerPrefixLength + previous.sampled.length : 0,
    prefixKey: conversationRootOf(req),
    excludeWorkerIds: [...excludeWorkerIds],
    serviceTier: typeof body.service_tier === 'string' ? body.service_tier : '',
    expectedOutputTokens: body.max_output_tokens ?? 0,
  };
}
