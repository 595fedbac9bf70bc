import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A user-space link emulator: a TCP proxy on 127.0.0.1 that gives the path between a benchmark
 * client and the edge the bandwidth and round-trip time of a real user's link, so re-sending a
 * growing history pays its upload time as it would over a network, not over loopback.
 *
 * Each direction is one FIFO link shared by every connection through the emulator (a user's
 * uplink is one pipe): a segment of n bytes starts when the link is free, occupies it for
 * n × 8 / bitsPerSecond, and arrives rttMs / 2 later. Writes are cut into segments of at most
 * {@link SEGMENT_BYTES}, so a large body streams through the link instead of arriving at once.
 * Timers fire with about 1 ms granularity, which bounds the emulator's precision.
 */

/** One link: up = client → server. Infinity = no bandwidth limit. */
export interface LinkProfile {
  readonly name: string;
  readonly upBitsPerSecond: number;
  readonly downBitsPerSecond: number;
  readonly rttMs: number;
  /** What the preset stands for, for reports. */
  readonly description: string;
}

/** The presets the benchmarks offer (`--link`). */
export const LINK_PRESETS = {
  'same-host': {
    name: 'same-host',
    upBitsPerSecond: Infinity,
    downBitsPerSecond: Infinity,
    rttMs: 0,
    description: 'client on the same host (through the proxy, unshaped)',
  },
  cloud: {
    name: 'cloud',
    upBitsPerSecond: 1e9,
    downBitsPerSecond: 1e9,
    rttMs: 2,
    description: 'a client in the same cloud region: 1 Gbit/s each way, 2 ms RTT',
  },
  home: {
    name: 'home',
    upBitsPerSecond: 20e6,
    downBitsPerSecond: 100e6,
    rttMs: 30,
    description: 'home broadband: 20 Mbit/s up, 100 Mbit/s down, 30 ms RTT',
  },
} as const satisfies Record<string, LinkProfile>;
export type LinkPresetName = keyof typeof LINK_PRESETS;
export const LINK_PRESET_NAMES = Object.keys(LINK_PRESETS) as LinkPresetName[];

/** Largest piece a write is cut into (about a TCP window's worth). */
export const SEGMENT_BYTES = 16 * 1024;
/** Bytes queued in one direction of one connection before its source is paused (back-pressure). */
export const MAX_QUEUED_BYTES = 4 * 1024 * 1024;

/** A running emulator in front of one target port. */
export interface LinkEmulator {
  /** The port to connect to instead of the target's. */
  readonly port: number;
  readonly profile: LinkProfile;
  /** Closes the listener and every connection through it. Idempotent. */
  close(): Promise<void>;
}

/** The shared state of one direction of the link. */
class LinkDirection {
  private freeAt = 0;

  constructor(
    private readonly bitsPerSecond: number,
    private readonly delayMs: number,
  ) {}

  /** True when this direction adds nothing (then bytes are forwarded at once). */
  get transparent(): boolean {
    return !Number.isFinite(this.bitsPerSecond) && this.delayMs === 0;
  }

  /** When a segment of `bytes` sent now arrives at the other end (performance.now() ms). */
  arrival(bytes: number, now: number): number {
    const start = Math.max(now, this.freeAt);
    this.freeAt = Number.isFinite(this.bitsPerSecond) ? start + (bytes * 8 * 1000) / this.bitsPerSecond : start;
    return this.freeAt + this.delayMs;
  }
}

/** Forwards one direction of one connection through a {@link LinkDirection}, in order. */
class ShapedPipe {
  private readonly queue: { at: number; data: Buffer | null }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private queued = 0;
  private ended = false;

  constructor(
    private readonly from: Socket,
    private readonly to: Socket,
    private readonly link: LinkDirection,
  ) {
    from.on('data', (chunk: Buffer) => this.push(chunk));
    // A FIN (or a close without one) travels the link behind the data sent before it.
    const end = () => {
      if (this.ended) return;
      this.ended = true;
      this.enqueue(null, this.link.arrival(0, performance.now()));
    };
    from.on('end', end);
    from.on('close', end);
  }

  private push(chunk: Buffer): void {
    if (this.link.transparent) {
      this.to.write(chunk);
      return;
    }
    const now = performance.now();
    for (let off = 0; off < chunk.length; off += SEGMENT_BYTES) {
      const data = chunk.subarray(off, Math.min(chunk.length, off + SEGMENT_BYTES));
      this.enqueue(data, this.link.arrival(data.length, now));
    }
    if (this.queued > MAX_QUEUED_BYTES) this.from.pause();
  }

  private enqueue(data: Buffer | null, at: number): void {
    if (data === null && this.link.transparent) {
      if (!this.to.destroyed) this.to.end();
      return;
    }
    this.queue.push({ at, data });
    this.queued += data?.length ?? 0;
    this.arm();
  }

  private arm(): void {
    if (this.timer !== undefined || this.queue.length === 0) return;
    this.timer = setTimeout(() => this.flush(), Math.max(0, this.queue[0].at - performance.now()));
  }

  private flush(): void {
    this.timer = undefined;
    const now = performance.now();
    while (this.queue.length > 0 && this.queue[0].at <= now + 0.05) {
      const { data } = this.queue.shift()!;
      if (data === null) {
        if (!this.to.destroyed) this.to.end();
        continue;
      }
      this.queued -= data.length;
      if (!this.to.destroyed) this.to.write(data);
    }
    if (this.queued < MAX_QUEUED_BYTES / 4 && this.from.isPaused()) this.from.resume();
    this.arm();
  }

  /** Drops what is queued (the connection is gone). */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.length = 0;
  }
}

/**
 * Starts an emulator on 127.0.0.1 (a free port) that forwards every connection to `target`
 * through `profile`'s link. Each accepted connection opens one to the target.
 */
export async function startLinkEmulator(
  target: { host: string; port: number },
  profile: LinkProfile,
): Promise<LinkEmulator> {
  const up = new LinkDirection(profile.upBitsPerSecond, profile.rttMs / 2);
  const down = new LinkDirection(profile.downBitsPerSecond, profile.rttMs / 2);
  const sockets = new Set<Socket>();
  const server: Server = createServer({ noDelay: true, allowHalfOpen: true }, (client) => {
    const upstream = connect({ host: target.host, port: target.port, noDelay: true, allowHalfOpen: true });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    const pipes = [new ShapedPipe(client, upstream, up), new ShapedPipe(upstream, client, down)];
    const teardown = () => {
      for (const p of pipes) p.stop();
      client.destroy();
      upstream.destroy();
    };
    client.on('error', teardown);
    upstream.on('error', teardown);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  let closing: Promise<void> | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    profile,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      })),
  };
}
