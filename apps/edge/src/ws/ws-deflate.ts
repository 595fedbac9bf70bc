import type { PerMessageDeflateOptions } from 'ws';
import type { EdgeConfig } from '../config';

/**
 * permessage-deflate (RFC 7692) on WebSocket mode, negotiated only with a client that offers it
 * (Codex does; the openai SDK's `ws` does too). Each field has its `EDGE_WS_DEFLATE_*` variable.
 */
export interface WsDeflateSettings {
  /** Negotiate when offered (EDGE_WS_DEFLATE, default true); false: never, as before. */
  enabled: boolean;
  /**
   * Frames under this many bytes go out uncompressed (EDGE_WS_DEFLATE_THRESHOLD, default 512):
   * a text delta (~200 bytes) costs more CPU to deflate than its saving buys on any link preset,
   * while `response.created` / `.completed` (instructions, tools, output) shrink 5–20× (bench/link/ws-deflate.bench.ts).
   */
  thresholdBytes: number;
  /** zlib level (EDGE_WS_DEFLATE_LEVEL, default 1: most of level 6's saving for a third of its CPU). */
  level: number;
  /**
   * The server's LZ77 window, 2^bits bytes (EDGE_WS_DEFLATE_WINDOW_BITS, default 13). With context
   * takeover a connection keeps its deflate state, 2^(bits+2) + 2^(memLevel+9) bytes: 64 KiB at the
   * defaults, 256 KiB at 15/8 (zlib's own), which buys ~11% fewer bytes per turn
   * (bench/results/ws-deflate.md); an edge holding 10,000 sockets pays for it in gigabytes. A client
   * that asks for a smaller server window than this is refused the extension by ws (and then falls
   * back to HTTP on the 426): none of the clients we know asks.
   */
  windowBits: number;
  /** zlib memLevel (EDGE_WS_DEFLATE_MEM_LEVEL, default 6): see `windowBits`. */
  memLevel: number;
}

export const DEFAULT_WS_DEFLATE: Readonly<WsDeflateSettings> = Object.freeze({
  enabled: true,
  thresholdBytes: 512,
  level: 1,
  windowBits: 13,
  memLevel: 6,
});

/**
 * Whether a frame of `bytes` goes out deflated (when deflate was negotiated at all). ws applies its
 * own `threshold` only without context takeover, so the edge decides per frame (`send`'s `compress`).
 */
export function compressFrame(settings: WsDeflateSettings | undefined, bytes: number): boolean {
  return bytes >= (settings ?? DEFAULT_WS_DEFLATE).thresholdBytes;
}

/** ws's `perMessageDeflate` option for `settings` (false: not negotiated). */
export function perMessageDeflate(settings: WsDeflateSettings = DEFAULT_WS_DEFLATE): PerMessageDeflateOptions | false {
  if (!settings.enabled) return false;
  return {
    threshold: settings.thresholdBytes,
    // Context takeover unless the client asks otherwise: successive events repeat the same keys and
    // the response's echo of instructions and tools, which a kept window finds again. (Setting the
    // takeover options to false would make ws refuse a client that asks for no takeover.)
    serverMaxWindowBits: settings.windowBits,
    zlibDeflateOptions: { level: settings.level, memLevel: settings.memLevel },
  };
}

/** The settings the edge's configuration names. */
export function wsDeflateFromConfig(
  config: Pick<
    EdgeConfig,
    | 'EDGE_WS_DEFLATE'
    | 'EDGE_WS_DEFLATE_THRESHOLD'
    | 'EDGE_WS_DEFLATE_LEVEL'
    | 'EDGE_WS_DEFLATE_WINDOW_BITS'
    | 'EDGE_WS_DEFLATE_MEM_LEVEL'
  >,
): WsDeflateSettings {
  return {
    enabled: config.EDGE_WS_DEFLATE,
    thresholdBytes: config.EDGE_WS_DEFLATE_THRESHOLD,
    level: config.EDGE_WS_DEFLATE_LEVEL,
    windowBits: config.EDGE_WS_DEFLATE_WINDOW_BITS,
    memLevel: config.EDGE_WS_DEFLATE_MEM_LEVEL,
  };
}
