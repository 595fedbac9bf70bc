import { ConfigError } from '@fastloop/service-kit';

/** One inference worker the router may send requests to. */
export interface WorkerSpec {
  /** Stable identity: affinity hashes on it, metrics label it. Defaults to the address. */
  readonly id: string;
  /** `host:port` (IPv6 as `[::1]:port`), what the edge dials. */
  readonly address: string;
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}))$/;

/**
 * Parses `INFERENCE_WORKERS` entries: `id=host:port` or `host:port` (id = the address).
 * @throws ConfigError naming the entry for bad syntax, a bad port, or a repeated id or address.
 */
export function parseWorkers(entries: readonly string[], field = 'INFERENCE_WORKERS'): WorkerSpec[] {
  const workers: WorkerSpec[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    const fail = (why: string) => new ConfigError(`${field}[${i}] '${entry}': ${why}`);
    const eq = entry.indexOf('=');
    const id = eq >= 0 ? entry.slice(0, eq).trim() : undefined;
    const address = (eq >= 0 ? entry.slice(eq + 1) : entry).trim();
    const colon = address.lastIndexOf(':');
    const host = address.slice(0, colon);
    const port = Number(address.slice(colon + 1));
    if (colon <= 0 || !HOST.test(host)) throw fail('expected id=host:port or host:port');
    if (!Number.isInteger(port) || port < 1 || port > 65535 || !/^\d+$/.test(address.slice(colon + 1)))
      throw fail('port must be 1-65535');
    if (id !== undefined && !ID.test(id)) throw fail('id must be 1-64 characters: letters, digits and . _ : -');
    const worker = { id: id ?? address, address };
    if (seen.has(worker.id)) throw fail(`worker id '${worker.id}' is listed twice`);
    if (seen.has(`@${address}`)) throw fail(`address '${address}' is listed twice`);
    seen.add(worker.id).add(`@${address}`);
    workers.push(Object.freeze(worker));
  });
  return workers;
}
