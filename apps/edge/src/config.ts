import { z } from 'zod';
import { DEFAULT_REQUEST_LIMITS } from '@fastloop/protocol';
import { env, internalTokenSchema, loadConfig } from '@fastloop/service-kit';
import { usageOutboxConfigShape } from './usage';

/**
 * The edge's configuration, from env (and FASTLOOP_CONFIG_FILE). Every knob has a local default
 * except the API keys: production must name its keys (the local launcher passes a dev key).
 */
export const edgeConfigSchema = z.object({
  ...usageOutboxConfigShape,
  /** Public HTTP + WebSocket port. */
  PORT: env.port(8080),
  /** Bind address for every listener; 0.0.0.0 in containers. */
  BIND_HOST: z.string().default('127.0.0.1'),
  /** /healthz, /readyz, /metrics. */
  ADMIN_PORT: env.port(9090),
  /** gRPC bidi `fastloop.responses.v1` for internal callers. */
  EDGE_GRPC_PORT: env.port(50050),
  LOG_LEVEL: env.logLevel(),
  /** Comma-separated `key` or `key:tenant` entries; a key without tenant bills tenant `default`. */
  FASTLOOP_API_KEYS: z
    .string({ error: 'FASTLOOP_API_KEYS is required (comma-separated API keys; the launcher uses sk-fastloop-dev)' })
    .min(1, 'FASTLOOP_API_KEYS must name at least one key'),
  /**
   * Admin API keys, same syntax: they also may read any tenant's usage (`GET /v1/usage?tenant=`).
   * Default none.
   */
  FASTLOOP_ADMIN_API_KEYS: z.string().default(''),
  /** Billing's internal usage report server, which `GET /v1/usage` reads (never exposed itself). */
  BILLING_URL: z.string().url().default('http://127.0.0.1:9095'),
  /** Shared service-to-service token (x-fastloop-internal-token); sent on every call to safety, router and inference. */
  FASTLOOP_INTERNAL_TOKEN: internalTokenSchema,
  SAFETY_ADDRESS: z.string().default('127.0.0.1:50051'),
  ROUTER_ADDRESS: z.string().default('127.0.0.1:50052'),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  /** Largest accepted HTTP body or WebSocket message, in bytes. */
  EDGE_MAX_BODY_BYTES: env.int(32 * 1024 * 1024, 1024),
  /**
   * Start inference while the safety verdict is in flight, hiding the classifier's round trip under
   * the engine's time to first token. A blocked prompt still gets an error and nothing else, but it
   * has reached the (self-hosted) worker. false: nothing reaches a worker before the verdict.
   */
  EDGE_SAFETY_OVERLAP: env.bool(true),
  /**
   * Classify and Generate run on long-lived multiplexed gRPC streams (one message each way per
   * call) instead of a gRPC call each; false: a call each (as a peer without the streams gets).
   */
  EDGE_GRPC_MUX: env.bool(true),
  /** Multiplexed streams kept to safety; each is one pick of the channel's round robin (one pod). */
  EDGE_SAFETY_STREAMS: env.int(4, 1),
  /** Multiplexed Generate streams kept to each worker: its calls are spread over them in turn. */
  EDGE_WORKER_STREAMS: env.int(4, 1),
  /**
   * Safety's bounds on one Classify call (its `SAFETY_MAX_ITEM_BYTES`, `SAFETY_MAX_REQUEST_BYTES`:
   * keep them equal), in UTF-8 bytes of item text, checked before the call is encoded: an item
   * over them gets safety's 400 (`safety_item_too_large`, `safety_request_too_large`) without
   * megabytes written to protobuf on the event loop. 0: not checked at the edge.
   */
  EDGE_SAFETY_MAX_ITEM_BYTES: env.int(4 * 1024 * 1024, 0),
  EDGE_SAFETY_MAX_REQUEST_BYTES: env.int(8 * 1024 * 1024, 0),
  /**
   * Bodies (HTTP bodies, WebSocket/gRPC events, Classify calls' text) from this many bytes are
   * decoded and parsed on the render threads, and take turns for their CPU stages on the event loop
   * (validation, Classify encoding): one such stage at a time in the process, tenants round robin,
   * the event loop turning between two, so small requests never wait behind several large ones in
   * a row (issue 17). 0: parsed in place, no turns.
   */
  EDGE_LARGE_BODY_BYTES: env.int(256 * 1024, 0),
  /**
   * Each tenant's large bodies (from EDGE_LARGE_BODY_BYTES) are paced to this many bytes per second
   * and this burst (a token bucket per tenant, service-kit's KeyedPacer): a body waits for its tenant's credit,
   * so one tenant's megabytes cannot take the cores from the others (issue 17). 0: no pacing.
   */
  EDGE_TENANT_LARGE_BYTES_PER_SECOND: env.int(8 * 1024 * 1024, 0),
  EDGE_TENANT_LARGE_BYTES_BURST: env.int(32 * 1024 * 1024, 1),
  /** Deadline for a Classify call. */
  SAFETY_TIMEOUT_MS: env.int(5_000, 1),
  /** Distinct request headers (instructions + tools) whose safety verdict is remembered (LRU). */
  EDGE_SAFETY_HEADER_CACHE_ENTRIES: env.int(1024, 1),
  /**
   * Classify generated text as it streams; a blocked output ends the response `incomplete` with
   * `content_filter`. Text is shown once judged, all but the characters that could still begin a
   * match (a prefix of a credential shape or a policy term: safety's `held_chars`), so the client
   * never sees a match.
   */
  EDGE_OUTPUT_MODERATION: env.bool(true),
  /**
   * How long new output waits to be sent to safety with more, in ms (0: at once when no call is
   * in flight; while one is, text gathers and goes with its answer). More: fewer calls, later text.
   */
  EDGE_OUTPUT_MODERATION_FLUSH_MS: env.int(0, 0),
  /** New output characters that are sent without waiting for `EDGE_OUTPUT_MODERATION_FLUSH_MS`. */
  EDGE_OUTPUT_MODERATION_FLUSH_CHARS: env.int(256, 1),
  /**
   * Output batches of one response sent to safety before the previous ones are answered (1: one
   * at a time). Above 1, new text goes while an answer is on its way, so it waits about one round
   * trip instead of up to two; safety judges the batches in order on the state it keeps.
   */
  EDGE_OUTPUT_MODERATION_IN_FLIGHT: env.int(2, 1),
  /** Deadline for a Route call. */
  ROUTER_TIMEOUT_MS: env.int(2_000, 1),
  /**
   * Deadline for a continuation's Route call once its decision's reuse_ms ran out: it has a worker
   * to keep, so a router that cannot answer this fast keeps it for the turn (counted) instead of
   * holding the turn for ROUTER_TIMEOUT_MS. The router answers in well under a millisecond; this
   * bounds what a saturated host's queueing adds to a turn.
   */
  ROUTER_REASK_TIMEOUT_MS: env.int(250, 1),
  /**
   * A continuation whose decision's reuse_ms ran out: `background` goes on with it and asks the
   * router beside the turn, whose answer (a move, say) the next turn starts from; `inline` asks
   * before the turn, a round trip before its Generate call (~3 ms measured on these VMs), which an
   * agent's tool call lasting longer than reuse_ms made every turn pay. See route-refresh.ts.
   */
  EDGE_ROUTE_REVALIDATION: z.enum(['background', 'inline']).default('background'),
  /**
   * At startup, how long the edge asks a router that is not up yet for its model catalog (to load
   * each model's tokenizer before reporting ready) before it starts without it: the edge starts
   * beside its upstreams, as a Deployment's pods do.
   */
  EDGE_STARTUP_CATALOG_WAIT_MS: env.int(30_000, 0),
  /** Longest silence between two chunks of a Generate stream before the turn fails. */
  INFERENCE_IDLE_TIMEOUT_MS: env.int(60_000, 1),
  /** Overall deadline of one Generate call. */
  INFERENCE_TIMEOUT_MS: env.int(600_000, 1),
  /**
   * Bytes allowed to queue towards one client that reads slower than the model writes (WebSocket,
   * SSE, gRPC stream); beyond it the connection is closed (WebSocket 1008) and its turn cancelled.
   */
  EDGE_MAX_BUFFERED_BYTES: env.int(16 * 1024 * 1024, 1024),
  /** A WebSocket connection's lifetime; then `websocket_connection_limit_reached` (PROTOCOL.md). */
  EDGE_WS_MAX_CONNECTION_MS: env.int(60 * 60 * 1000, 1),
  /** Persistent connections (WebSocket + gRPC streams) of the process; more get 429 `too_many_connections`. */
  EDGE_MAX_CONNECTIONS: env.int(10_000, 1),
  /** Persistent connections one tenant may hold on the process; more get 429 `too_many_connections`. */
  EDGE_MAX_CONNECTIONS_PER_TENANT: env.int(1_000, 1),
  /** `response.create` events queued behind the one in flight on a connection; more are rejected. */
  EDGE_WS_MAX_QUEUED: env.int(16, 0),
  // permessage-deflate on WebSocket mode, when the client offers it (ws/ws-deflate.ts, README).
  /** Negotiate permessage-deflate when a client offers it. */
  EDGE_WS_DEFLATE: env.bool(true),
  /** Frames under this many bytes go out uncompressed. */
  EDGE_WS_DEFLATE_THRESHOLD: env.int(512, 0),
  /** zlib compression level, 0–9. */
  EDGE_WS_DEFLATE_LEVEL: z.coerce.number().int().min(0).max(9).default(1),
  /** The server's deflate window, 2^bits bytes (8–15). */
  EDGE_WS_DEFLATE_WINDOW_BITS: z.coerce.number().int().min(8).max(15).default(13),
  /** zlib memLevel, 1–9 (memory of a connection's deflate state). */
  EDGE_WS_DEFLATE_MEM_LEVEL: z.coerce.number().int().min(1).max(9).default(6),
  /**
   * Bytes of requests held from arrival until their turn ends (WebSocket and gRPC `response.create`
   * events running or queued, HTTP bodies): per connection (or HTTP request), per tenant, per
   * process. Over any of them: 429 `too_many_queued_bytes`, naming it.
   */
  EDGE_MAX_QUEUED_BYTES_PER_CONNECTION: env.int(64 * 1024 * 1024, 1024),
  EDGE_MAX_QUEUED_BYTES_PER_TENANT: env.int(128 * 1024 * 1024, 1024),
  EDGE_MAX_QUEUED_BYTES: env.int(512 * 1024 * 1024, 1024),
  /** Responses running at once on one WebSocket/gRPC connection, all lanes (`stream_id`) together. */
  EDGE_WS_MAX_ACTIVE_RESPONSES: env.int(16, 1),
  /** Named lanes (`stream_id`) one connection keeps; an idle one is forgotten to make room. */
  EDGE_WS_MAX_STREAMS: env.int(32, 1),
  /** `response.steer` inputs waiting on one running response; more get `response.steer.failed` (`too_many_pending_steers`). */
  EDGE_WS_MAX_PENDING_STEERS: env.int(16, 1),
  /** Byte budget of one connection's cache of previous responses (LRU within the connection). */
  EDGE_CONN_CACHE_BYTES: env.int(256 * 1024 * 1024, 0),
  /** Byte budget of all connection caches of the process (LRU across connections). */
  EDGE_CACHE_TOTAL_BYTES: env.int(2 * 1024 * 1024 * 1024, 0),
  /** Seconds a stored response (store: true) is kept in Redis. */
  EDGE_STORE_TTL_SECONDS: env.int(30 * 24 * 3600, 1),
  /**
   * How long a stored-response write that failed (Redis away) is retried before it is given up;
   * while Redis is known to be down, new responses answer `store: false` instead.
   */
  EDGE_STORE_RETRY_MS: env.int(600_000, 0),
  /**
   * How long a routing decision is reused by turns without cached state (0 = ask every time). A
   * decision whose worker fails is dropped at once, so this only bounds how long a new, better
   * worker goes unnoticed.
   */
  EDGE_ROUTE_CACHE_TTL_MS: env.int(30_000, 0),
  /**
   * Keys sealing reasoning `encrypted_content`: comma-separated `kid:base64key` entries (32-byte
   * AES-256 keys); the first seals, all open, so a new key is rotated in first and an old one kept
   * until its blobs are gone. Unset: a development key (a warning is logged at start).
   */
  EDGE_REASONING_KEYS: z.string().optional(),
  /** Output tokens a compaction summary may take (`/v1/responses/compact`, `context_management`). */
  EDGE_COMPACTION_MAX_OUTPUT_TOKENS: env.int(2048, 16),
  /** Characters of the latest user messages `/v1/responses/compact` keeps verbatim before its compaction item. */
  EDGE_COMPACTION_KEEP_USER_CHARS: env.int(80_000, 0),
  /** Entries in the process-wide cache of rendered item tokens used by the HTTP path. */
  EDGE_RENDER_CACHE_ENTRIES: env.int(50_000, 0),
  /** Tokens the render cache holds over all entries (its memory bound: ~8 bytes a token). */
  EDGE_RENDER_CACHE_TOKENS: env.int(8_000_000, 0),
  /** Threads that tokenize large inputs off the event loop (0 = the cores); one tenant may hold all but one. */
  EDGE_RENDER_THREADS: env.int(0, 0),
  /**
   * Characters of new text (a non-ASCII UTF-16 unit counts 8) from which a turn tokenizes on the
   * render threads instead of the event loop; smaller turns stay in place (no thread hop).
   */
  EDGE_RENDER_POOL_MIN_CHARS: env.int(16 * 1024, 0),
  /**
   * Each tenant's time on the render threads per second, and burst (ms): a rendering waits while its
   * tenant has used more, so one tenant's costly inputs take at most this share of a core (issue 17). 0: no pacing.
   */
  EDGE_TENANT_RENDER_MS_PER_SECOND: env.int(500, 0),
  EDGE_TENANT_RENDER_BURST_MS: env.int(1_000, 1),
  /** Budget of one request's tokenizing on the render threads, waiting included; over it a 400 `render_deadline_exceeded`. */
  EDGE_RENDER_TIMEOUT_MS: env.int(2_000, 1),
  // Bounds on one request (see turn/edge-limits.ts and README "Limits"); each refusal is a 400
  // whose message names the limit.
  /** Items in `input`. */
  EDGE_MAX_INPUT_ITEMS: env.int(DEFAULT_REQUEST_LIMITS.maxInputItems, 1),
  /** Tools in `tools`, namespace members included. */
  EDGE_MAX_TOOLS: env.int(DEFAULT_REQUEST_LIMITS.maxTools, 0),
  /** JSON nesting depth of a tool's `parameters` / `text.format.schema` (a property is two levels). */
  EDGE_MAX_SCHEMA_DEPTH: env.int(DEFAULT_REQUEST_LIMITS.maxSchemaDepth, 2),
  /** JSON values in one such schema. */
  EDGE_MAX_SCHEMA_NODES: env.int(DEFAULT_REQUEST_LIMITS.maxSchemaNodes, 1),
  /** Length of any one string in a request, in characters. */
  EDGE_MAX_STRING_CHARS: env.int(DEFAULT_REQUEST_LIMITS.maxStringChars, 1),
  /**
   * JSON nesting depth of a whole request; at most 511: a large body parsed on a render thread comes
   * back cut at 512 levels (render-pool/json-task.ts), which only a lower bound refuses as it would
   * the whole body.
   */
  EDGE_MAX_JSON_DEPTH: z.coerce.number().int().min(8).max(511).default(DEFAULT_REQUEST_LIMITS.maxJsonDepth),
  /** Rendered text of one tool (description + signature), in characters. */
  EDGE_MAX_TOOL_RENDERED_CHARS: env.int(256 * 1024, 64),
  /** Rendered text of the header (instructions + all tools), in characters. */
  EDGE_MAX_HEADER_RENDERED_CHARS: env.int(4 * 1024 * 1024, 1024),
});

export type EdgeConfig = z.infer<typeof edgeConfigSchema>;

export function loadEdgeConfig(source?: Record<string, string | undefined>): Readonly<EdgeConfig> {
  return loadConfig(edgeConfigSchema, { env: source });
}
