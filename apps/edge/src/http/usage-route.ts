import { z } from 'zod';
import { ApiError, ApiErrors } from '@fastloop/protocol';
import type { Principal } from '../auth';
import type { UsageList, UsageQuery } from '../usage/usage-report';

/** The longest `start`..`end` range of one report (billing refuses more). */
export const MAX_USAGE_DAYS = 366;
/** Days reported when `start` is omitted: the 30 days ending with `end`. */
export const DEFAULT_USAGE_DAYS = 30;
const DAY_MS = 86_400_000;

const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine(
    (d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d),
    'is not a calendar date',
  )
  .optional();
const querySchema = z.object({
  start: day,
  end: day,
  model: z.string().min(1).max(128).optional(),
  tenant: z.string().min(1).max(256).optional(),
});

/** Where the route gets its report (the edge's UsageReporter). */
export interface UsageSource {
  report(query: UsageQuery): Promise<UsageList>;
}

/**
 * `GET /v1/usage?start=&end=&model=[&tenant=]`: the caller's own tenant's usage, one row per
 * model and UTC day. Only an admin key may name a `tenant` other than its own (or omit it for
 * every tenant). `end` defaults to today (UTC), `start` to 29 days before `end`.
 */
export async function usageRoute(
  source: UsageSource,
  search: URLSearchParams,
  principal: Principal,
  now = Date.now(),
): Promise<UsageList> {
  const parsed = querySchema.safeParse(Object.fromEntries(search));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const param = String(issue.path[0] ?? '');
    throw ApiErrors.invalidRequest(`Invalid '${param}': ${issue.message}.`, param);
  }
  const q = parsed.data;
  const end = q.end ?? new Date(now).toISOString().slice(0, 10);
  const start =
    q.start ?? new Date(Date.parse(`${end}T00:00:00Z`) - (DEFAULT_USAGE_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
  const days = (Date.parse(`${end}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / DAY_MS + 1;
  if (days < 1) throw ApiErrors.invalidRequest(`Invalid 'end': ${end} is before start ${start}.`, 'end');
  if (days > MAX_USAGE_DAYS)
    throw ApiErrors.invalidRequest(`Invalid 'end': a report covers at most ${MAX_USAGE_DAYS} days.`, 'end');
  return source.report({ tenant: scopedTenant(principal, q.tenant), model: q.model, start, end });
}

/** The tenant a report may cover: the key's own, or (admin keys only) any named one or all. */
function scopedTenant(principal: Principal, requested: string | undefined): string | undefined {
  if (principal.admin) return requested;
  if (requested === undefined || requested === principal.tenant) return principal.tenant;
  throw new ApiError({
    status: 403,
    type: 'invalid_request_error',
    code: 'permission_denied',
    param: 'tenant',
    message: 'This API key may only read its own tenant’s usage.',
  });
}
