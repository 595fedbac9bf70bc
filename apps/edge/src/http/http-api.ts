import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { ApiError, ApiErrors, toHttpErrorBody, validateRequest } from '@fastloop/protocol';
import { logHttpAccess, type TurnAccess } from '../access-log';
import { failureOf, toApiError } from '../api-errors';
import type { ApiKeyAuth, Principal } from '../auth';
import { runTurn } from '../turn/run-turn';
import { DEFAULT_EDGE_LIMITS } from '../turn/edge-limits';
import type { StateLoader, TurnDeps, TurnRequest } from '../turn/turn-deps';
import { loadPrevious } from '../session/previous-response';
import { compactConversation } from './compact-route';
import type { QueuedBytes } from '../session/queued-bytes';
import { sseStream } from './sse-stream';
import { parseBody, readBody } from './read-body';
import type { ResponseStoreReader } from './store-routes';
import { handleStoreRoute } from './store-routes';
import { usageRoute, type UsageSource } from './usage-route';

/** What one request's access line says besides its method, path, status and time. */
interface RequestAccess {
  tenant?: string;
  code?: string;
  turn?: TurnAccess;
}

export interface HttpApiOptions {
  deps: TurnDeps;
  auth: ApiKeyAuth;
  maxBodyBytes: number;
  /** Bytes of SSE queued towards a slow client before the stream is cut and the turn cancelled. */
  maxBufferedBytes: number;
  /** Resolves `previous_response_id` from the response store. */
  loader?: StateLoader;
  store?: ResponseStoreReader;
  /** `GET /v1/usage`; absent: 404. */
  usage?: UsageSource;
  /** Bounds the bytes of bodies being read or served, per tenant and process; absent: `maxBodyBytes` only. */
  queuedBytes?: QueuedBytes;
}

/**
 * The HTTP side of the Responses API: POST /v1/responses (JSON or SSE), GET /v1/models and the
 * stored-response routes. Every error is an OpenAI-shaped error body.
 */
export class HttpApi {
  constructor(private readonly options: HttpApiOptions) {}

  /** The HTTP server's `request` handler. Never throws. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    const started = performance.now();
    const access: RequestAccess = {};
    // One access line per request, when it ends (access-log.ts).
    res.once('close', () =>
      logHttpAccess(this.options.deps.logger, {
        method: req.method ?? '?',
        path: (req.url ?? '/').split('?')[0],
        status: res.statusCode,
        aborted: !res.writableFinished,
        ms: performance.now() - started,
        ...access,
      }),
    );
    this.route(req, res, access).catch((err: unknown) => {
      const apiErr = toApiError(err);
      if (apiErr.status >= 500) this.options.deps.logger.error({ err }, 'request failed');
      access.code = apiErr.code ?? apiErr.type;
      sendError(res, apiErr);
    });
  }

  private async route(req: IncomingMessage, res: ServerResponse, access: RequestAccess): Promise<void> {
    const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '');
    if (req.headers.upgrade && path === '/v1/responses') {
      // An upgrade we could not take (e.g. not a WebSocket upgrade): clients fall back to HTTP on 426.
      return sendError(
        res,
        ApiErrors.invalidRequest('Upgrade Required: use a WebSocket upgrade or POST.', null, 'upgrade_required'),
        426,
      );
    }
    const principal = this.options.auth.authenticate(req.headers.authorization);
    if (!principal) return sendError(res, ApiErrors.unauthorized());
    access.tenant = principal.tenant;
    if (path === '/v1/responses' && req.method === 'POST') return this.createResponse(req, res, principal, access);
    if (path === '/v1/responses/compact' && req.method === 'POST') {
      const turn = await this.turnRequest(req, res, principal);
      return sendJson(res, 200, await compactConversation(this.options.deps, { ...turn, transport: 'http' }));
    }
    if (path === '/v1/models' && req.method === 'GET') return this.listModels(res);
    if (path === '/v1/usage' && req.method === 'GET' && this.options.usage) {
      return sendJson(
        res,
        200,
        await usageRoute(this.options.usage, new URL(req.url ?? '/', 'http://edge').searchParams, principal),
      );
    }
    if (path === '/v1/responses' && req.method === 'GET') {
      return sendError(
        res,
        ApiErrors.invalidRequest(
          'GET /v1/responses is the WebSocket mode endpoint: send a WebSocket upgrade.',
          null,
          'upgrade_required',
        ),
        426,
      );
    }
    if (path.startsWith('/v1/responses/') && (await handleStoreRoute(this.options.store, req, res, path, principal)))
      return;
    sendError(res, ApiErrors.notFound(`Route ${req.method} ${path}`));
  }

  private async createResponse(
    req: IncomingMessage,
    res: ServerResponse,
    principal: Principal,
    access: RequestAccess,
  ): Promise<void> {
    const turn = await this.turnRequest(req, res, principal);
    if (turn.transport === 'http') {
      const outcome = await runTurn(this.options.deps, turn, () => undefined);
      access.turn = outcome.access;
      // A JSON client reads the status code, not `status: "failed"` inside a 200: a turn that failed
      // after it started (its worker died) is the 5xx it would have been had it failed earlier.
      if (outcome.error) return sendError(res, outcome.error.status >= 500 ? outcome.error : ApiErrors.server());
      await this.stored(outcome.response);
      return sendJson(res, 200, outcome.response);
    }
    const stream = sseStream(res, {
      maxBufferedBytes: this.options.maxBufferedBytes,
      logger: turn.logger,
      // A client that stops reading must not make us buffer the whole response: cancel the turn.
      cancel: () => turn.abort.abort(),
    });
    try {
      const outcome = await runTurn(this.options.deps, turn, stream.emit);
      access.turn = outcome.access;
      await this.stored(outcome.response);
    } catch (err) {
      // Thrown before response.created: nothing is streamed yet, so answer with a plain HTTP error.
      if (!stream.started()) throw err;
      turn.logger.error({ err }, 'stream failed after start');
    }
    res.end();
  }

  /**
   * Waits (briefly) for a `store: true` response's write before the request ends: HTTP has no
   * affinity, so the client's next request, chained by `previous_response_id`, may reach another
   * edge, which reads it from Redis. The write starts just after the terminal event (the finish
   * stage's afterTerminal), hence the turn of the event loop first.
   */
  private async stored(response: { id: string; store?: boolean | null }): Promise<void> {
    const writer = this.options.store?.writer;
    if (!writer || response.store === false) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    await writer.settled(response.id, 1_000);
  }

  /** Reads, validates and resolves a POST body into a turn (cancelled when the client goes away). */
  private async turnRequest(
    req: IncomingMessage,
    res: ServerResponse,
    principal: Principal,
  ): Promise<TurnRequest & { abort: AbortController }> {
    const { deps, queuedBytes } = this.options;
    const holder = queuedBytes?.holder(principal.tenant);
    // The body's bytes are held until the response ends, however it ends.
    if (queuedBytes && holder) res.once('close', () => queuedBytes.releaseAll(holder));
    const reserve = (n: number) => {
      const taken = queuedBytes && holder ? queuedBytes.acquire(holder, n) : undefined;
      return taken instanceof ApiError ? taken : undefined;
    };
    const bytes = await readBody(req, this.options.maxBodyBytes, reserve);
    const { body, validateMs } = await parseRequest(deps, principal.tenant, bytes);
    if (body.background === true)
      throw ApiErrors.unsupportedParameter('background', 'background mode is not supported.');
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const transport = body.stream === true ? ('sse' as const) : ('http' as const);
    const logger = deps.logger.child({ requestId: randomUUID(), tenant: principal.tenant, transport });
    const sources = { loader: this.options.loader, metrics: deps.metrics, tenant: principal.tenant };
    const { previous, loadMs } = await loadPrevious(body.previous_response_id, sources);
    return {
      body,
      principal,
      transport,
      previous,
      generate: true,
      signal: abort.signal,
      validateMs,
      loadMs,
      logger,
      abort,
    };
  }

  private async listModels(res: ServerResponse): Promise<void> {
    const { models } = await this.options.deps.backends.listModels().catch(failureOf('router'));
    sendJson(res, 200, {
      object: 'list',
      data: models.map((m) => ({ id: m.id, object: 'model', created: m.created, owned_by: m.ownedBy })),
    });
  }
}

/**
 * Parses and validates a body, timed as the turn's validate stage (neither the body's arrival nor
 * its wait for a turn counts). A large body is parsed on a thread (its bytes handed over: detached
 * here) and its validation takes a turn with other large bodies' stages (LargeBodyGate).
 */
async function parseRequest(
  deps: TurnDeps,
  tenant: string,
  bytes: Buffer,
): Promise<{ body: ReturnType<typeof validateRequest>; validateMs: number }> {
  let validateMs = 0;
  const size = bytes.length;
  const stage = <T>(work: () => T): Promise<T> => {
    const timed = () => {
      const start = performance.now();
      try {
        return work();
      } finally {
        validateMs += performance.now() - start;
      }
    };
    return deps.largeBodies ? deps.largeBodies.run(tenant, size, timed) : Promise.resolve(timed());
  };
  await deps.largeBodies?.admit(tenant, size);
  const json = await parseBody(deps.largeBodies, tenant, bytes, stage, (ms) => (validateMs += ms));
  const body = await stage(() => validateRequest(json, (deps.limits ?? DEFAULT_EDGE_LIMITS).request));
  return { body, validateMs };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, err: ApiError, status = err.status): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, status, toHttpErrorBody(err));
}
