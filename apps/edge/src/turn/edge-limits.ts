import { DEFAULT_REQUEST_LIMITS, type RequestLimits } from '@fastloop/protocol';
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
}

/** The defaults (as in the edge's config): what applies when a caller passes none. */
export const DEFAULT_EDGE_LIMITS: Readonly<EdgeLimits> = Object.freeze({
  request: DEFAULT_REQUEST_LIMITS,
  maxToolRenderedChars: 256 * 1024,
  maxHeaderRenderedChars: 4 * 1024 * 1024,
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
  };
}
