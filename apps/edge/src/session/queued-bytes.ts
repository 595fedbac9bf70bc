import { ApiError } from '@fastloop/protocol';
import { Gauge, type Registry } from '@fastloop/service-kit';

/** Options of {@link QueuedBytes}; each bound is the edge's config option of the same name. */
export interface QueuedBytesOptions {
  /** EDGE_MAX_QUEUED_BYTES_PER_CONNECTION: request bytes one connection (or HTTP request) may hold. */
  perConnection: number;
  /** EDGE_MAX_QUEUED_BYTES_PER_TENANT: request bytes one tenant may hold on the process. */
  perTenant: number;
  /** EDGE_MAX_QUEUED_BYTES: request bytes the process holds over all tenants. */
  perProcess: number;
}

/** Defaults of {@link QueuedBytesOptions} (as in the edge's config). */
export const DEFAULT_QUEUED_BYTES: Readonly<QueuedBytesOptions> = Object.freeze({
  perConnection: 64 * 1024 * 1024,
  perTenant: 128 * 1024 * 1024,
  perProcess: 512 * 1024 * 1024,
});

/** One connection's (or HTTP request's) share of the bytes held. */
export interface ByteHolder {
  readonly tenant: string;
  held: number;
}

/**
 * The bytes of requests the edge holds, from their arrival until their turn ends: WebSocket and gRPC
 * `response.create` events running or queued behind one another, and HTTP bodies being read and
 * served. Counts alone did not bound memory (issue 17: 8 sockets × 16 queued 8 MB frames took
 * 0.45–1.05 GB and slowed another tenant's turn to seconds); bytes are bounded per connection, per
 * tenant and per process, and a request over any bound is refused with a 429 naming it, before it
 * is parsed.
 */
export class QueuedBytes {
  private total = 0;
  private readonly byTenant = new Map<string, number>();

  constructor(private readonly options: QueuedBytesOptions = DEFAULT_QUEUED_BYTES) {}

  /** A holder for one connection or HTTP request of `tenant`. */
  holder(tenant: string): ByteHolder {
    return { tenant, held: 0 };
  }

  /** Takes `bytes` for `holder`: returns their release function (idempotent), or the error to answer. */
  acquire(holder: ByteHolder, bytes: number): (() => void) | ApiError {
    const { perConnection, perTenant, perProcess } = this.options;
    const tenantHeld = this.byTenant.get(holder.tenant) ?? 0;
    if (holder.held + bytes > perConnection)
      return tooMany(
        `This connection's requests waiting or running would exceed ${perConnection} bytes (EDGE_MAX_QUEUED_BYTES_PER_CONNECTION); wait for a response to finish.`,
      );
    if (tenantHeld + bytes > perTenant)
      return tooMany(
        `Your organization's requests waiting or running on this server would exceed ${perTenant} bytes (EDGE_MAX_QUEUED_BYTES_PER_TENANT); retry shortly.`,
      );
    if (this.total + bytes > perProcess)
      return tooMany(
        `This server holds its maximum of ${perProcess} bytes of requests (EDGE_MAX_QUEUED_BYTES); retry shortly.`,
      );
    this.move(holder, bytes);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.move(holder, -bytes);
    };
  }

  /** Gives back every byte `holder` holds (an HTTP request that ended, however it ended). */
  releaseAll(holder: ByteHolder): void {
    this.move(holder, -holder.held);
  }

  /** Bytes held by the process, or by one tenant. */
  held(tenant?: string): number {
    return tenant === undefined ? this.total : (this.byTenant.get(tenant) ?? 0);
  }

  /** `fastloop_edge_queued_request_bytes`: the bytes held by the process, read at each scrape. */
  register(registry: Registry): void {
    const held = () => this.total;
    new Gauge({
      name: 'fastloop_edge_queued_request_bytes',
      help: 'Bytes of requests held from arrival to the end of their turn (bounded by EDGE_MAX_QUEUED_BYTES)',
      registers: [registry],
      collect() {
        this.set(held());
      },
    });
  }

  private move(holder: ByteHolder, bytes: number): void {
    holder.held += bytes;
    this.total += bytes;
    const left = (this.byTenant.get(holder.tenant) ?? 0) + bytes;
    if (left === 0) this.byTenant.delete(holder.tenant);
    else this.byTenant.set(holder.tenant, left);
  }
}

function tooMany(message: string): ApiError {
  return new ApiError({ status: 429, type: 'requests', code: 'too_many_queued_bytes', message });
}

const NOTHING_HELD = (): void => undefined;

/** Holds `bytes` for a holder under the budget (nothing when either is absent): the release, or the refusal. */
export function holdBytes(
  budget: QueuedBytes | undefined,
  holder: ByteHolder | undefined,
  bytes: number,
): (() => void) | ApiError {
  return budget && holder ? budget.acquire(holder, bytes) : NOTHING_HELD;
}
