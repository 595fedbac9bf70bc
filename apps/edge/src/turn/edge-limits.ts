import { DEFAULT_REQUEST_LIMITS, type RequestLimits } from '@fastloop/protocol';
import type { ScanBounds } from '@fastloop/service-kit';
import type { EdgeConfig } from '../config';

/**
 * Every bound the edge puts on one request, so that no request can stall the process for others:
 * its shape (checked before validation, see `checkRequestLimits`) and what it renders to (a tool's
 * text, the header's text; its tokens are bounded by the model's context window).
 */
export interface EdgeLimits {
  request: RequestLimits;
  /** Longest rendered text of one tool (description and TypeScript-like signature). */
  maxToolRenderedChars: number;
  /** Longest rendered text of the header (system and developer messages: instructions and tools). */
  maxHeaderRenderedChars: number;
  /**
   * Safety's bounds on one Classify call, checked before the call is encoded (a multi-megabyte
   * item is refused with safety's own 400 without being written to protobuf); absent: not checked.
   */
  scan?: ScanBounds;
}

const SCAN_NAMES = { item: 'EDGE_SAFETY_MAX_ITEM_BYTES', request: 'EDGE_SAFETY_MAX_REQUEST_BYTES' };

/** The defaults (as in the edge's config): what applies when a caller passes none. */
export const DEFAULT_EDGE_LIMITS: Readonly<EdgeLimits> = Object.freeze({
  request: DEFAULT_REQUEST_LIMITS,
  maxToolRenderedChars: 256 * 1024,
  maxHeaderRenderedChars: 4 * 1024 * 1024,
  scan: { maxItemBytes: 4 * 1024 * 1024, maxRequestBytes: 8 * 1024 * 1024, names: SCAN_NAMES },
});

/** The limits named by the edge's configuration. */
export function edgeLimitsFromConfig(
  config: Pick<
    EdgeConfig,
    | 'EDGE_MAX_INPUT_ITEMS'
    | 'EDGE_MAX_TOOLS'
    | 'EDGE_MAX_SCHEMA_DEPTH'
    | 'EDGE_MAX_SCHEMA_NODES'
    | 'EDGE_MAX_STRING_CHARS'
    | 'EDGE_MAX_JSON_DEPTH'
    | 'EDGE_MAX_TOOL_RENDERED_CHARS'
    | 'EDGE_MAX_HEADER_RENDERED_CHARS'
    | 'EDGE_SAFETY_MAX_ITEM_BYTES'
    | 'EDGE_SAFETY_MAX_REQUEST_BYTES'
  >,
): EdgeLimits {
  return {
    request: {
      maxInputItems: config.EDGE_MAX_INPUT_ITEMS,
      maxTools: config.EDGE_MAX_TOOLS,
      maxSchemaDepth: config.EDGE_MAX_SCHEMA_DEPTH,
      maxSchemaNodes: config.EDGE_MAX_SCHEMA_NODES,
      maxStringChars: config.EDGE_MAX_STRING_CHARS,
      maxJsonDepth: config.EDGE_MAX_JSON_DEPTH,
    },
    maxToolRenderedChars: config.EDGE_MAX_TOOL_RENDERED_CHARS,
    maxHeaderRenderedChars: config.EDGE_MAX_HEADER_RENDERED_CHARS,
    scan: scanBounds(config.EDGE_SAFETY_MAX_ITEM_BYTES, config.EDGE_SAFETY_MAX_REQUEST_BYTES),
  };
}

/** 0 turns a bound off; both 0: no check at the edge (safety still checks its own). */
function scanBounds(maxItemBytes: number, maxRequestBytes: number): ScanBounds | undefined {
  if (maxItemBytes === 0 && maxRequestBytes === 0) return undefined;
  return {
    maxItemBytes: maxItemBytes || Number.POSITIVE_INFINITY,
    maxRequestBytes: maxRequestBytes || Number.POSITIVE_INFINITY,
    names: SCAN_NAMES,
  };
}
