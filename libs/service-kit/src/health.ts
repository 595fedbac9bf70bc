import { EventEmitter } from 'node:events';
import {
  status as GrpcStatus,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { healthV1 } from '@fastloop/proto';

type ServingStatus = healthV1.HealthCheckResponse_ServingStatus;
const ServingStatus = healthV1.HealthCheckResponse_ServingStatus;

/**
 * grpc.health.v1 as real, changing state: a service starts NOT_SERVING, flips to SERVING once its
 * dependencies are up, and back to NOT_SERVING when draining. The empty name "" is the whole server.
 */
export class HealthState {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly changes = new EventEmitter();
  private readonly watches = new Set<ServerWritableStream<healthV1.HealthCheckRequest, healthV1.HealthCheckResponse>>();

  constructor(services: readonly string[]) {
    this.statuses.set('', ServingStatus.NOT_SERVING);
    for (const s of services) this.statuses.set(s, ServingStatus.NOT_SERVING);
    this.changes.setMaxListeners(0);
  }

  /** Sets one service's status, or every service's when `service` is omitted. */
  set(serving: boolean, service?: string): void {
    const value = serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
    const names = service === undefined ? [...this.statuses.keys()] : [service];
    for (const name of names) {
      if (this.statuses.get(name) === value) continue;
      this.statuses.set(name, value);
      this.changes.emit('change', name, value);
    }
  }

  get(service = ''): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  isServing(service = ''): boolean {
    return this.statuses.get(service) === ServingStatus.SERVING;
  }

  /**
   * Ends every Watch stream (after the statuses it has been sent): a server that drains must not
   * wait out its grace period for watchers (routers) that never hang up. They see the stream end,
   * treat the peer as not serving and reconnect, which a closing server refuses.
   */
  endWatches(): void {
    for (const call of [...this.watches]) call.end();
    this.watches.clear();
  }

  /** The grpc.health.v1.Health implementation backed by this state. */
  implementation(): healthV1.HealthServer {
    return {
      check: (
        call: ServerUnaryCall<healthV1.HealthCheckRequest, healthV1.HealthCheckResponse>,
        cb: sendUnaryData<healthV1.HealthCheckResponse>,
      ) => {
        const s = this.statuses.get(call.request.service);
        if (s === undefined)
          return cb({ code: GrpcStatus.NOT_FOUND, details: `unknown service '${call.request.service}'` });
        cb(null, { status: s });
      },
      list: (
        _call: ServerUnaryCall<healthV1.HealthListRequest, healthV1.HealthListResponse>,
        cb: sendUnaryData<healthV1.HealthListResponse>,
      ) => {
        const statuses: Record<string, healthV1.HealthCheckResponse> = {};
        for (const [name, s] of this.statuses) statuses[name] = { status: s };
        cb(null, { statuses });
      },
      watch: (call: ServerWritableStream<healthV1.HealthCheckRequest, healthV1.HealthCheckResponse>) => {
        const name = call.request.service;
        call.write({ status: this.statuses.get(name) ?? ServingStatus.SERVICE_UNKNOWN });
        const onChange = (changed: string, s: ServingStatus) => {
          if (changed === name) call.write({ status: s });
        };
        this.changes.on('change', onChange);
        this.watches.add(call);
        const stop = () => {
          this.changes.off('change', onChange);
          this.watches.delete(call);
        };
        call.on('cancelled', stop);
        call.on('close', stop);
        call.on('finish', stop);
      },
    };
  }
}
