import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import { DEBUG_GC_PATH, exposedGc, forceGc } from './debug-gc';
import type { Dependencies } from './dependencies';

export interface AdminServerOptions {
  /**
   * Port for /healthz, /readyz and /metrics (and `POST /debug/gc` when node runs with
   * `--expose-gc`); 0 picks a free one.
   */
  port: number;
  /** Bind address; default 127.0.0.1 (set 0.0.0.0 in containers). */
  host?: string;
  registry: Registry;
  /** Readiness probe: true when the service can take traffic. Liveness is "process answers". */
  isReady: () => boolean;
  /**
   * Dependencies that also gate readiness; while one is down, /readyz answers 503 with
   * `{"status":"not_ready","waiting":[{dependency,address,error}]}` so whoever waits can say why.
   */
  dependencies?: Dependencies;
  logger: Logger;
}

export interface AdminServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves the operational endpoints every service exposes, apart from its main traffic port.
 * `POST /debug/gc` forces a full garbage collection and answers the surviving heap as JSON
 * ({@link GcReport}), for leak checks such as bench/load; it exists only when the process was
 * started with `--expose-gc` (404 otherwise, like any unknown path).
 */
export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return sendText(res, 200, 'ok\n');
    if (path === '/readyz') {
      const waiting = options.dependencies?.waiting() ?? [];
      if (waiting.length > 0)
        return sendText(res, 503, `${JSON.stringify({ status: 'not_ready', waiting })}\n`, 'application/json');
      return options.isReady() ? sendText(res, 200, 'ready\n') : sendText(res, 503, 'not ready\n');
    }
    if (path === '/metrics') {
      options.registry.metrics().then(
        (body) => sendText(res, 200, body, options.registry.contentType),
        (err: unknown) => {
          options.logger.error({ err }, 'metrics collection failed');
          sendText(res, 500, 'metrics error\n');
        },
      );
      return;
    }
    const gc = path === DEBUG_GC_PATH ? exposedGc() : undefined;
    if (gc) {
      if (req.method !== 'POST') return sendText(res, 405, 'use POST\n', undefined, { allow: 'POST' });
      const report = forceGc(gc);
      options.logger.info(
        { gcMs: report.gcMs, heapUsedBytes: report.heap.used_heap_size },
        'forced garbage collection',
      );
      return sendText(res, 200, `${JSON.stringify(report)}\n`, 'application/json');
    }
    sendText(res, 404, 'not found\n');
  });
  await listen(server, options.port, options.host ?? '127.0.0.1');
  let closed: Promise<void> | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    close: () => (closed ??= closeServer(server)),
  };
}

function sendText(
  res: import('node:http').ServerResponse,
  status: number,
  body: string,
  type = 'text/plain; charset=utf-8',
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { ...headers, 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Listens and resolves once bound; rejects on EADDRINUSE and friends. */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Stops accepting, lets running requests finish, and resolves when every connection is gone.
 * close() alone leaves keep-alive connections open and serving: a load balancer that pools its
 * connections to us kept sending requests on them and held a drain open for 22 s. So every
 * response started from now on says `Connection: close`, and a connection is closed as soon as it is
 * idle (checked every 50 ms: one whose response was running at close() becomes idle when it ends),
 * not when its keep-alive timeout ends.
 */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const closeAfterResponse = (_req: unknown, res: import('node:http').ServerResponse) => {
      if (!res.headersSent) res.setHeader('connection', 'close');
    };
    server.prependListener('request', closeAfterResponse);
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearInterval(idle);
      server.off('request', closeAfterResponse);
      resolve();
    });
    server.closeIdleConnections();
  });
}
