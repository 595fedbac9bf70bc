import { readFileSync } from 'node:fs';
import { get } from 'node:http';

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
  heapUsedBytes: number;
}

/** Parses prom-client's default Node metrics out of a Prometheus text page. */
export function parseNodeMetrics(text: string): NodeMetrics {
  const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})?\\s+(\\S+)`, 'm').exec(text)?.[1] ?? NaN);
  return {
    eventLoopP50Ms: value('nodejs_eventloop_lag_p50_seconds') * 1000,
    eventLoopP99Ms: value('nodejs_eventloop_lag_p99_seconds') * 1000,
    heapUsedBytes: value('nodejs_heap_size_used_bytes'),
  };
}

/** GET http://127.0.0.1:<port>/metrics as text. */
export function fetchMetrics(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve(text));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`GET /metrics on :${port} timed out`)));
  });
}
