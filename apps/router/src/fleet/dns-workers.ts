import { Resolver } from 'node:dns/promises';
import { ConfigError, type Logger } from '@fastloop/service-kit';
import type { WorkerSpec } from '../workers';

/** Options of {@link DnsWorkers}. */
export interface DnsWorkersOptions {
  /** `name:port` (`INFERENCE_WORKERS_DNS`), e.g. a Kubernetes headless Service `inference.fastloop.svc:50053`. */
  target: string;
  /** Re-resolve period, ms (`ROUTER_DNS_INTERVAL_MS`). */
  intervalMs: number;
  /** DNS servers (`ip` or `ip:port`) instead of the system's (`ROUTER_DNS_SERVERS`, tests). */
  servers?: readonly string[];
  /** Deadline of one resolution, ms. */
  timeoutMs?: number;
  logger: Logger;
  /** Called with the full worker list after every resolution that changed it. */
  onChange: (workers: readonly WorkerSpec[]) => void;
}

/** Parses `name:port`; @throws ConfigError naming INFERENCE_WORKERS_DNS. */
export function parseDnsTarget(target: string): { name: string; port: number } {
  const colon = target.lastIndexOf(':');
  const name = target.slice(0, colon);
  const port = Number(target.slice(colon + 1));
  if (colon <= 0 || !/^[A-Za-z0-9.-]+$/.test(name) || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new ConfigError(`INFERENCE_WORKERS_DNS '${target}': expected name:port, e.g. inference.fastloop.svc:50053`);
  return { name, port };
}

/**
 * Workers from DNS: the A records of one name (a Kubernetes headless Service lists one per ready
 * pod), each `ip:port` a worker whose id is that address. Resolved now and every `intervalMs`, so a
 * scaled-up worker takes load without a router restart and a removed one stops being watched. A
 * failed resolution keeps the last list (a DNS hiccup must not empty the fleet); an answer with no
 * records (NXDOMAIN, no pods) empties it. Lifecycle: start() → close() (idempotent).
 */
export class DnsWorkers {
  private readonly resolver: Resolver;
  private readonly name: string;
  private readonly port: number;
  private timer: NodeJS.Timeout | undefined;
  private last = '';
  private closed = false;

  constructor(private readonly options: DnsWorkersOptions) {
    ({ name: this.name, port: this.port } = parseDnsTarget(options.target));
    this.resolver = new Resolver({ timeout: options.timeoutMs ?? 2_000, tries: 2 });
    if (options.servers && options.servers.length > 0) this.resolver.setServers([...options.servers]);
  }

  /** Resolves now (awaitable) and then every interval. */
  async start(): Promise<void> {
    await this.resolveOnce();
    this.schedule();
  }

  /** One resolution; applies its result. Exposed for tests. */
  async resolveOnce(): Promise<void> {
    let addresses: string[];
    try {
      addresses = await this.resolver.resolve4(this.name);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTFOUND' && code !== 'ENODATA') {
        this.options.logger.warn({ err, name: this.name }, 'worker DNS resolution failed; keeping the last list');
        return;
      }
      addresses = [];
    }
    if (this.closed) return;
    const workers = [...new Set(addresses)].sort().map((ip) => {
      const address = `${ip}:${this.port}`;
      return Object.freeze({ id: address, address });
    });
    const key = workers.map((w) => w.id).join(',');
    if (key === this.last) return;
    this.last = key;
    this.options.logger.info({ name: this.name, workers: workers.map((w) => w.id) }, 'worker list from DNS');
    this.options.onChange(workers);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.resolver.cancel();
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      void this.resolveOnce().finally(() => this.schedule());
    }, this.options.intervalMs);
    this.timer.unref();
  }
}
