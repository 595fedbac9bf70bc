import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer, INTERNAL_TOKEN_METADATA, internalTokenMatches, listen } from '@fastloop/service-kit';
import type { Logger } from 'pino';
import { z } from 'zod';
import { MAX_REPORT_DAYS, type LedgerStore } from './ledger-store';

export interface UsageReportServerOptions {
  /** Port for `GET /v1/usage`; 0 picks a free one. */
  port: number;
  /** Bind address; default 127.0.0.1. Keep it on an internal interface. */
  host?: string;
  /**
   * FASTLOOP_INTERNAL_TOKEN: when set, a request without it in the `x-fastloop-internal-token`
   * header gets 401 before anything is read. Unset: the report answers anyone (the launcher and
   * deployments set it).
   */
  internalToken?: string;
  ledger: LedgerStore;
  logger: Logger;
  /** Most rows one report returns (`truncated: true` beyond); default 1000. */
  maxRows?: number;
  /**
   * Longest wait for the ledger before answering 503; default 5000 ms. The shared connection
   * waits for Redis to come back rather than failing, which a report caller should not inherit.
   */
  timeoutMs?: number;
}

export interface UsageReportServer {
  readonly port: number;
  /** Stops accepting and waits for open requests. Idempotent. */
  close(): Promise<void>;
}

const idParam = z.string().min(1).max(512).optional();
const dayParam = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be YYYY-MM-DD')
  .refine(
    (d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d),
    'is not a calendar date',
  )
  .optional();
const querySchema = z
  .object({ tenant: idParam, model: idParam, day: dayParam, start: dayParam, end: dayParam })
  .refine((q) => (q.start === undefined) === (q.end === undefined), {
    message: 'start and end go together',
    path: ['start'],
  })
  .refine((q) => q.day === undefined || q.start === undefined, {
    message: 'day and start/end exclude each other',
    path: ['day'],
  })
  .refine((q) => q.start === undefined || q.end === undefined || q.end >= q.start, {
    message: 'end is before start',
    path: ['end'],
  })
  .refine((q) => q.start === undefined || q.end === undefined || daysBetween(q.start, q.end) <= MAX_REPORT_DAYS, {
    message: `a report covers at most ${MAX_REPORT_DAYS} days`,
    path: ['end'],
  });

function daysBetween(start: string, end: string): number {
  return (Date.parse(`${end}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / 86_400_000 + 1;
}

/**
 * Serves the usage report: `GET /v1/usage?tenant=&model=&day=|start=&end=` answers
 * `{object:'usage.report', tenant, model, day, start, end, truncated, data:[{tenant, model, day,
 * requests, input_tokens, cached_tokens, output_tokens, reasoning_tokens}]}`. Omitted filters mean
 * all; `day` (UTC) selects that day's bucket, `start`..`end` one row per day with usage, instead of
 * all-time totals. Internal only, behind the internal token: clients reach it through the edge's
 * `GET /v1/usage`, which authenticates them and scopes the tenant.
 */
export async function startUsageReportServer(options: UsageReportServerOptions): Promise<UsageReportServer> {
  const server = createServer((req, res) => {
    handle(req, res, options).catch((err: unknown) => {
      options.logger.error({ err }, 'usage report failed');
      if (!res.headersSent) sendJson(res, 503, errorBody('ledger_unavailable', 'the usage ledger could not be read'));
      else res.destroy();
    });
  });
  await listen(server, options.port, options.host ?? '127.0.0.1');
  let closed: Promise<void> | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    close: () => (closed ??= closeServer(server)),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, options: UsageReportServerOptions): Promise<void> {
  if (
    options.internalToken !== undefined &&
    !internalTokenMatches(req.headers[INTERNAL_TOKEN_METADATA], options.internalToken)
  )
    return sendJson(res, 401, errorBody('unauthenticated', 'an internal request without a valid service token'));
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname !== '/v1/usage') return sendJson(res, 404, errorBody('not_found', `no route for ${url.pathname}`));
  if (req.method !== 'GET') return sendJson(res, 405, errorBody('method_not_allowed', 'use GET'), { allow: 'GET' });
  const parsed = querySchema.safeParse(Object.fromEntries(url.searchParams));
  if (!parsed.success) {
    const message = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    return sendJson(res, 400, errorBody('invalid_request', message.replace(/^(day|start|end): (must|is)/, '$1 $2')));
  }
  const q = parsed.data;
  const report = await withDeadline(
    options.ledger.report({ ...q, maxRows: options.maxRows }),
    options.timeoutMs ?? 5000,
  );
  sendJson(res, 200, {
    object: 'usage.report',
    tenant: q.tenant ?? null,
    model: q.model ?? null,
    day: q.day ?? null,
    start: q.start ?? null,
    end: q.end ?? null,
    truncated: report.truncated,
    data: report.rows,
  });
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  work.catch(() => undefined);
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`ledger read timed out after ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

function errorBody(code: string, message: string) {
  return { error: { code, message } };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
