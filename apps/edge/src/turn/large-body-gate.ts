import { RenderDeadlineError } from '@fastloop/model-profiles';
import { ApiErrors } from '@fastloop/protocol';
import { KeyedPacer } from '@fastloop/service-kit';
import type { EdgeConfig } from '../config';
import { deserializeJson, type ParsedJson } from '../render-pool/json-task';
import type { RenderPool } from '../render-pool/render-pool';

/**
 * Parses a tenant's JSON body off the event loop (the render pool's threads), the bytes handed over;
 * resolves to the reading of the value back (synchronous work in proportion to the body), which the
 * gate runs as a stage.
 */
export type JsonParser = (tenant: string, bytes: Uint8Array) => Promise<() => ParsedJson>;

/**
 * Takes turns for the CPU stages of large request bodies (issue 17): JSON.parse of megabytes, the
 * validation walk over them, the protobuf encoding of a Classify call that carries them. Each such
 * stage is synchronous work of tens of milliseconds; several bodies arriving together used to run
 * back to back, so a small request waited behind all of them. Through the gate, at most one large
 * stage runs at a time in the process, and the next one starts only after the event loop has had a
 * turn (setImmediate: the I/O that arrived meanwhile, small requests included, runs first). Waiting
 * stages are taken a tenant at a time, round robin, so one tenant's flood of large bodies delays
 * another tenant's large body by at most one stage of each tenant ahead of it.
 *
 * A stage under `minBytes` runs at once: small requests never wait here. Large bodies are also
 * paced per tenant (`admit`), which bounds the share of the cores one tenant's bodies take. With a
 * `parser`, a large body is decoded and parsed on a thread instead (`parse`): the event loop then
 * only reads the parsed value back and validates it, each a stage that takes its turn.
 */
export class LargeBodyGate {
  /** True from a large stage's start until the event loop has turned after it. */
  private busy = false;
  /** Waiting stages, per tenant in arrival order; the Map's order is the round robin's. */
  private readonly waiting = new Map<string, (() => void)[]>();

  /**
   * @param minBytes size from which a body's stages take turns (`EDGE_LARGE_BODY_BYTES`); 0: never.
   * @param pacer paces each tenant's large bodies to a byte rate before their first stage.
   * @param parser parses large bodies off the event loop; absent: in place, as a stage.
   */
  constructor(
    readonly minBytes: number,
    private readonly pacer?: KeyedPacer,
    private readonly parser?: JsonParser,
  ) {}

  /**
   * Parses a large body on a thread, its bytes handed over (the caller must not read them after:
   * they may be detached): undefined when the body is small or there is no parser (the caller
   * parses in place). Rejects with a 429 when the tenant's share of the threads kept the
   * parse waiting past its budget; other pool failures as the pool reports them.
   */
  parse(tenant: string, bytes: Uint8Array): Promise<ParsedJson> | undefined {
    const size = bytes.byteLength;
    if (!this.parser || !this.isLarge(size)) return undefined;
    return this.parser(tenant, bytes).then(
      (read) => this.run(tenant, size, read),
      (err: unknown) => {
        if (!(err instanceof RenderDeadlineError)) throw err;
        throw ApiErrors.rateLimited(
          1,
          "Parsing this request waited longer than the edge allows (EDGE_RENDER_TIMEOUT_MS): this tenant's large requests are over their share of the edge's threads; retry shortly.",
        );
      },
    );
  }

  /** Whether a large body of `bytes` is parsed off the event loop. */
  parsesOffThread(bytes: number): boolean {
    return this.parser !== undefined && this.isLarge(bytes);
  }

  /**
   * Waits, for a large body, until its tenant's byte rate allows it (see KeyedPacer); once per
   * body, before its first stage. Undefined (no wait) for a small body or a tenant within its rate.
   */
  admit(tenant: string, bytes: number): Promise<void> | undefined {
    return this.isLarge(bytes) ? this.pacer?.take(tenant, bytes) : undefined;
  }

  /** Whether a body of `bytes` takes turns. */
  isLarge(bytes: number): boolean {
    return this.minBytes > 0 && bytes >= this.minBytes;
  }

  /**
   * Runs `stage` (synchronous work on a body of `bytes`) when its turn comes: at once when the
   * body is small or nothing else is large; else after the stages ahead of it and a turn of the
   * event loop. A stage that returns a promise holds the gate only for its synchronous part.
   */
  async run<T>(tenant: string, bytes: number, stage: () => T): Promise<T> {
    if (!this.isLarge(bytes)) return stage();
    if (this.busy) await new Promise<void>((resolve) => this.enqueue(tenant, resolve));
    this.busy = true;
    try {
      return stage();
    } finally {
      setImmediate(() => this.next());
    }
  }

  /**
   * Runs `first`, then `second`, each a stage that takes its turn (see `run`); `second`'s result.
   * For a small body both run at once, with no promise between them (a Classify call leaves now).
   */
  async runTwo<T>(tenant: string, bytes: number, first: () => unknown, second: () => T): Promise<T> {
    if (!this.isLarge(bytes)) {
      first();
      return second();
    }
    await this.run(tenant, bytes, first);
    return this.run(tenant, bytes, second);
  }

  /** Stages waiting for their turn (for tests and metrics). */
  get queued(): number {
    let n = 0;
    for (const queue of this.waiting.values()) n += queue.length;
    return n;
  }

  private enqueue(tenant: string, resolve: () => void): void {
    const queue = this.waiting.get(tenant);
    if (queue) queue.push(resolve);
    else this.waiting.set(tenant, [resolve]);
  }

  /** Hands the gate to the first waiting tenant's oldest stage; that tenant goes to the back. */
  private next(): void {
    const first = this.waiting.entries().next();
    if (first.done) {
      this.busy = false;
      return;
    }
    const [tenant, queue] = first.value;
    const resolve = queue.shift()!;
    this.waiting.delete(tenant);
    if (queue.length > 0) this.waiting.set(tenant, queue);
    // busy stays true: the woken stage runs in a microtask, before anything else could take the gate.
    resolve();
  }
}

/** The gate and each tenant's byte pace as the edge's config sets them; large bodies parse on `pool`'s threads. */
export function largeBodyGateFromConfig(
  config: Pick<
    EdgeConfig,
    'EDGE_LARGE_BODY_BYTES' | 'EDGE_TENANT_LARGE_BYTES_PER_SECOND' | 'EDGE_TENANT_LARGE_BYTES_BURST'
  >,
  pool?: Pick<RenderPool, 'parseJson'>,
): LargeBodyGate {
  const pace = { perSecond: config.EDGE_TENANT_LARGE_BYTES_PER_SECOND, burst: config.EDGE_TENANT_LARGE_BYTES_BURST };
  const parser: JsonParser | undefined =
    pool && ((tenant, bytes) => pool.parseJson(bytes, { tenant }).then((parsed) => () => deserializeJson(parsed)));
  return new LargeBodyGate(config.EDGE_LARGE_BODY_BYTES, new KeyedPacer(pace), parser);
}
