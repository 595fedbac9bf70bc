import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { DEBUG_GC_PATH, type GcReport } from '@fastloop/service-kit';

/** CPU time and resident memory of a process, from /proc (Linux). */
export interface ProcessSample {
  /** User + system CPU time, ms. */
  cpuMs: number;
  /** Resident set size, bytes. */
  rssBytes: number;
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ; 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** Reads /proc/<pid>/stat and /proc/<pid>/status. */
export function sampleProcess(pid: number): ProcessSample {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return { cpuMs: ((utime + stime) * 1000) / TICKS_PER_SECOND, rssBytes: rssKb * 1024 };
}

/** The Node default metrics of a service's /metrics page that the load benchmark reads. */
export interface NodeMetrics {
  /** Event-loop delay p50 / p99 since the previous scrape (prom-client resets its histogram on each collect), ms. */
  eventLoopP50Ms: number;
  eventLoopP99Ms: number;
  /** The longest event-loop delay since the previous scrape, ms: a few long stalls (a full GC) hide under a p99. */
  eventLoopMaxMs: number;
}

/**
 * Parses prom-client's default Node metrics out of a Prometheus text page. (Not its heap figure:
 * heap used without a forced GC counts garbage not yet collected; see {@link forceGc}.)
 */
export function parseNodeMetrics(text: string): NodeMetrics {
  const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})?\\s+(\\S+)`, 'm').exec(text)?.[1] ?? NaN);
  return {
    eventLoopP50Ms: value('nodejs_eventloop_lag_p50_seconds') * 1000,
    eventLoopP99Ms: value('nodejs_eventloop_lag_p99_seconds') * 1000,
    eventLoopMaxMs: value('nodejs_eventloop_lag_max_seconds') * 1000,
  };
}

/** GET http://127.0.0.1:<port>/metrics as text. */
export async function fetchMetrics(port: number): Promise<string> {
  const res = await adminCall(port, 'GET', '/metrics');
  if (res.status !== 200) throw new Error(`GET /metrics on :${port} answered ${res.status}`);
  return res.body;
}

/** Event-loop delay p99 and max of each service since its previous scrape, ms; a service that does not answer is left out. */
export async function loopDelays(
  ports: Readonly<Record<string, number>>,
): Promise<{ p99: Record<string, number>; max: Record<string, number> }> {
  const out = { p99: {} as Record<string, number>, max: {} as Record<string, number> };
  await Promise.all(
    Object.entries(ports).map(async ([name, port]) => {
      const text = await fetchMetrics(port).catch(() => undefined);
      if (text === undefined) return;
      const metrics = parseNodeMetrics(text);
      out.p99[name] = metrics.eventLoopP99Ms;
      out.max[name] = metrics.eventLoopMaxMs;
    }),
  );
  return out;
}

/**
 * Forces a full garbage collection in the service behind admin `port` and returns the heap that
 * survived it (service-kit's `POST /debug/gc`, there only when the service runs with `--expose-gc`).
 */
export async function forceGc(port: number): Promise<GcReport> {
  const res = await adminCall(port, 'POST', DEBUG_GC_PATH);
  if (res.status === 404)
    throw new Error(`no ${DEBUG_GC_PATH} on :${port}: start the service with --expose-gc (FASTLOOP_SERVICE_NODE_ARGS)`);
  if (res.status !== 200) throw new Error(`POST ${DEBUG_GC_PATH} on :${port} answered ${res.status}`);
  return JSON.parse(res.body) as GcReport;
}

function adminCall(port: number, method: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${path} on :${port} timed out`)));
    req.end();
  });
}
