import type { ConversationEntry } from '@fastloop/model-profiles';
import type { InputItem, ResponseObject } from '@fastloop/protocol';
import type { NoticedFinding } from '../safety/safety-findings';
import type { LogView } from './append-log';
import type { RenderedConversation } from './render-conversation';
import type { HeaderSource } from './render-header';
import type { NextRoute } from './route-refresh';

/** The router's decision, reused by continuations while its worker answers. */
export interface RouteDecision {
  /** Model name as the client sent it; a continuation naming another model routes again. */
  requestedModel: string;
  model: string;
  profile: string;
  workerAddress: string;
  workerId: string;
  contextWindow: number;
  maxOutputTokens: number;
  engineModel: string;
  /**
   * Until when (Date.now() ms) a continuation may reuse this decision without asking the router
   * (its `reuse_ms`); undefined = until the worker fails.
   */
  reuseUntil?: number;
  /**
   * The router's `reuse_ms` behind `reuseUntil`. Only a decision the router let be reused for a
   * while (> 0) is revalidated beside a turn once it expires; 0 asks for a placement every turn.
   */
  reuseMs?: number;
}

/**
 * A header safety allowed (for `model`; the header is the state's `headerSource`) and what it
 * flagged: the next turn of the conversation reuses it while its header reads the same.
 */
export interface HeaderVerdictCarry {
  readonly model: string;
  readonly noticed: readonly NoticedFinding[];
}

/** A tool's name as the model sees it, for rendering that call's output. */
export interface CallTarget {
  name: string;
  namespace?: string;
}

/**
 * Everything a continuation of a response needs, so its turn costs O(new items): the items, their
 * rendering, the safety state, the routing decision and what the worker holds. Immutable once
 * built; successive states share their logs (see AppendLog, TokenLog).
 */
export interface ConversationState {
  readonly response: ResponseObject;
  readonly tenant: string;
  /** Every input and output item of the conversation, in order (what input_items lists). */
  readonly items: LogView<InputItem>;
  /** Items as the chat format sees them, parallel to `items` except item-less entries. */
  readonly entries: LogView<ConversationEntry>;
  readonly rendered: RenderedConversation;
  /** call_id → tool, for rendering function_call_output items. */
  readonly calls: ReadonlyMap<string, CallTarget>;
  /** Opaque safety state covering `safetyItems` items. */
  readonly safetyState: Buffer;
  readonly safetyItems: number;
  /** The header verdict of the turn that left this state (absent in a state rebuilt from the store). */
  readonly headerVerdict?: HeaderVerdictCarry;
  /** The header fields of the request that left this state, which the next turn compares its own with. */
  readonly headerSource?: HeaderSource;
  /** Some entry was masked by a safety redaction (the client's items were not). */
  readonly redacted?: boolean;
  /**
   * Entries and rendering were rebuilt from the client's items without the redaction masks (a
   * store reload of a redacted conversation): the next turn classifies and masks from item 0.
   */
  readonly unmasked?: boolean;
  /** The route this turn was served on (its worker holds the conversation's prefix). */
  readonly route: RouteDecision;
  /**
   * The router asked beside this turn (route-refresh.ts): once it has answered, the next turn starts
   * from its answer instead of `route`. Not stored: a reload asks again.
   */
  readonly routeRefresh?: { readonly next: NextRoute | undefined };
  /** The conversation's root for placement (route-hints.ts `conversationRootOf`), kept by its continuations. */
  readonly prefixKey?: string;
  /** The worker holds `workerPrefix` ++ `sampled` under session key = response id. */
  readonly workerPrefixLength: number;
  readonly sampled: readonly number[];
  /** Approximate bytes this state holds beyond what its parent shares (for cache budgets). */
  readonly bytes: number;
}

/**
 * A rough byte size of a value (about its JSON's length: a string counts its characters, as
 * UTF-16 units), used only for cache budgets. Walks the value instead of stringifying it: a
 * continuation state of megabytes of text cost 45 ms of JSON.stringify on the event loop (issue 17).
 * Throws on a cycle (`within`: the objects being walked), as JSON.stringify did, and a value
 * nested deeper than the stack allows throws RangeError as it did: the caller then stores the turn
 * without its state. A shared (not cyclic) object counts each time, as in its JSON.
 */
export function approxBytes(value: unknown, within: Set<object> = new Set()): number {
  if (typeof value === 'string') return value.length + 2;
  if (typeof value === 'number' || typeof value === 'boolean') return 8;
  if (value === null) return 4;
  if (typeof value !== 'object') return 0;
  if (within.has(value)) throw new TypeError('approxBytes: the value is cyclic');
  within.add(value);
  let bytes = 2;
  if (Array.isArray(value)) {
    bytes += value.length;
    for (const e of value) bytes += approxBytes(e, within);
  } else {
    for (const [k, e] of Object.entries(value)) bytes += k.length + 4 + approxBytes(e, within);
  }
  within.delete(value);
  return bytes;
}
