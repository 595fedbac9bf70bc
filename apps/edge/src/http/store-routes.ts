import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiErrors } from '@fastloop/protocol';
import type { Principal } from '../auth';
import type { ResponseStore } from '../store/response-store';
import type { StoreWriter } from '../store/store-writer';

export interface ResponseStoreReader {
  store: ResponseStore;
  writer: StoreWriter;
}

/**
 * GET /v1/responses/{id}, DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items
 * (cursor-paginated like OpenAI: `limit` 1–100 default 20, `order` asc|desc default desc,
 * `after`/`before` item ids). Returns false when the path is none of these.
 */
export async function handleStoreRoute(
  reader: ResponseStoreReader | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  principal: Principal,
): Promise<boolean> {
  const match = /^\/v1\/responses\/([^/]+)(\/input_items)?$/.exec(path);
  if (!match) return false;
  const [, id, inputItems] = match;
  if (!reader) throw ApiErrors.notFound('Response', id);
  await reader.writer.settled(id);
  if (req.method === 'GET' && !inputItems) {
    const record = await reader.store.get(id, principal.tenant);
    if (!record) throw ApiErrors.notFound('Response', id);
    return json(res, 200, record.response);
  }
  if (req.method === 'DELETE' && !inputItems) {
    if (!(await reader.store.delete(id, principal.tenant))) throw ApiErrors.notFound('Response', id);
    return json(res, 200, { id, object: 'response.deleted', deleted: true });
  }
  if (req.method === 'GET' && inputItems) {
    const record = await reader.store.get(id, principal.tenant);
    if (!record) throw ApiErrors.notFound('Response', id);
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    const page = paginate(await reader.store.items(record, 0, record.inputLength), query);
    return json(res, 200, page);
  }
  return false;
}

function paginate(items: { id?: string }[], query: URLSearchParams) {
  const limitRaw = query.get('limit');
  const limit = limitRaw === null ? 20 : Number(limitRaw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw ApiErrors.invalidRequest("Invalid 'limit': expected an integer between 1 and 100.", 'limit');
  }
  const order = query.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc')
    throw ApiErrors.invalidRequest("Invalid 'order': expected 'asc' or 'desc'.", 'order');
  let list = order === 'desc' ? items.slice().reverse() : items;
  const after = query.get('after');
  if (after) {
    const i = list.findIndex((it) => it.id === after);
    if (i < 0) throw ApiErrors.invalidRequest(`Item with id '${after}' not found.`, 'after');
    list = list.slice(i + 1);
  }
  const before = query.get('before');
  if (before) {
    const i = list.findIndex((it) => it.id === before);
    if (i < 0) throw ApiErrors.invalidRequest(`Item with id '${before}' not found.`, 'before');
    list = list.slice(0, i);
  }
  const data = list.slice(0, limit);
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
    has_more: list.length > limit,
  };
}

function json(res: ServerResponse, status: number, body: unknown): true {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
  return true;
}
