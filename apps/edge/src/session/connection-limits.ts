import { ApiError } from '@fastloop/protocol';

/** Options of {@link ConnectionLimits}. */
export interface ConnectionLimitsOptions {
  /** EDGE_MAX_CONNECTIONS: persistent connections (WebSocket + gRPC streams) of the process. */
  maxConnections: number;
  /** EDGE_MAX_CONNECTIONS_PER_TENANT: persistent connections one tenant may hold on the process. */
  maxPerTenant: number;
}

/**
 * Counts open persistent connections per process and per tenant, so one tenant (or a flood of
 * slow clients) cannot hold every socket. A slot is taken on connect and given back exactly once,
 * as soon as the connection is cut, not when its socket finally closes.
 */
export class ConnectionLimits {
  private total = 0;
  private readonly byTenant = new Map<string, number>();

  constructor(private readonly options: ConnectionLimitsOptions) {}

  /** Takes a slot for `tenant`: returns its release function (idempotent), or the error to answer. */
  acquire(tenant: string): (() => void) | ApiError {
    const mine = this.byTenant.get(tenant) ?? 0;
    if (this.total >= this.options.maxConnections)
      return tooMany(
        `This server holds its maximum of ${this.options.maxConnections} connections (EDGE_MAX_CONNECTIONS); retry shortly.`,
      );
    if (mine >= this.options.maxPerTenant)
      return tooMany(
        `Your organization holds its maximum of ${this.options.maxPerTenant} open connections on this server (EDGE_MAX_CONNECTIONS_PER_TENANT); close one first.`,
      );
    this.total++;
    this.byTenant.set(tenant, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const left = (this.byTenant.get(tenant) ?? 1) - 1;
      if (left === 0) this.byTenant.delete(tenant);
      else this.byTenant.set(tenant, left);
    };
  }

  /** Open connections of the process, or of one tenant. */
  count(tenant?: string): number {
    return tenant === undefined ? this.total : (this.byTenant.get(tenant) ?? 0);
  }
}

function tooMany(message: string): ApiError {
  return new ApiError({ status: 429, type: 'requests', code: 'too_many_connections', message });
}
