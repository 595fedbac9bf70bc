import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalidSafetyState } from './errors';
import type { RuleMatch } from './scan';

/** What a conversation's state says about the items already classified. */
export interface SafetyStateContent {
  /** Items the state covers; the next call's first item has this global index. */
  readonly itemsSeen: number;
  /** The conversation's first blocking match (earliest item, then rule order), or null. */
  readonly firstFinding: RuleMatch | null;
}

/** Wire version prefix. A new layout gets a new prefix; old ones are refused, never guessed at. */
export const STATE_VERSION = 'v1';

/**
 * Largest state accepted before any work is done. A v1 state is at most ~160 bytes; anything bigger
 * is not ours, and refusing it early keeps HMAC and JSON work bounded for hostile input.
 */
export const MAX_STATE_BYTES = 1024;

const UINT32_MAX = 0xffff_ffff;

/**
 * Encodes and checks the opaque state the edge carries between turns.
 *
 * Layout (ASCII): `v1.<payload>.<mac>`, payload = base64url of the JSON
 * `{"r":<ruleset hash>,"n":<items seen>,"f":[<rule id>,<item index>] | null}`, mac = base64url
 * HMAC-SHA256 over `v1.<payload>` (the version is authenticated too). Encoding is deterministic,
 * so classifying a conversation in one call or in many yields byte-identical states.
 */
export class SafetyStateCodec {
  private readonly key: Buffer;

  /**
   * @param secret HMAC key (`SAFETY_STATE_SECRET`); states made with another key are refused.
   * @param rulesetHash the rule set the states vouch for; states from other rules are refused.
   */
  constructor(secret: string | Buffer, private readonly rulesetHash: string) {
    this.key = Buffer.from(secret);
  }

  /** The state that covers no items (what an empty `state` field means). */
  static readonly EMPTY: SafetyStateContent = Object.freeze({ itemsSeen: 0, firstFinding: null });

  /** Serialises and signs a state. */
  encode(content: SafetyStateContent): Buffer {
    if (!Number.isInteger(content.itemsSeen) || content.itemsSeen < 0 || content.itemsSeen > UINT32_MAX) {
      throw new RangeError(`itemsSeen out of uint32 range: ${content.itemsSeen}`);
    }
    const f = content.firstFinding;
    const json = JSON.stringify({ r: this.rulesetHash, n: content.itemsSeen, f: f ? [f.ruleId, f.itemIndex] : null });
    const signed = `${STATE_VERSION}.${Buffer.from(json, 'utf8').toString('base64url')}`;
    return Buffer.from(`${signed}.${this.mac(signed).toString('base64url')}`, 'ascii');
  }

  /**
   * Verifies and reads a state; empty bytes are a new conversation.
   * @throws DomainError `invalid_safety_state` (INVALID_ARGUMENT) for anything not made by
   * `encode` with this secret and rule set.
   */
  decode(bytes: Uint8Array): SafetyStateContent {
    if (bytes.length === 0) return SafetyStateCodec.EMPTY;
    if (bytes.length > MAX_STATE_BYTES) throw invalidSafetyState('too large');
    const text = Buffer.from(bytes).toString('latin1');
    const parts = text.split('.');
    if (parts.length !== 3) throw invalidSafetyState('malformed');
    const [version, payload, mac] = parts;
    if (version !== STATE_VERSION) throw invalidSafetyState('unknown version');
    const expected = this.mac(`${version}.${payload}`);
    const given = Buffer.from(mac, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidSafetyState('bad MAC');
    return this.readPayload(payload);
  }

  private readPayload(payload: string): SafetyStateContent {
    let data: unknown;
    try {
      data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch (cause) {
      throw invalidSafetyState('malformed payload', cause);
    }
    // The MAC proves we wrote it, so shape errors mean a bug or a secret shared with another
    // writer; checked anyway so a bad state can never become a wrong verdict.
    const d = data as { r?: unknown; n?: unknown; f?: unknown };
    if (typeof d !== 'object' || d === null) throw invalidSafetyState('malformed payload');
    if (d.r !== this.rulesetHash) throw invalidSafetyState('made under a different rule set');
    if (!isCount(d.n)) throw invalidSafetyState('malformed payload');
    if (d.f === null) return { itemsSeen: d.n, firstFinding: null };
    if (!Array.isArray(d.f) || d.f.length !== 2 || typeof d.f[0] !== 'string' || !isCount(d.f[1]) || d.f[1] >= d.n) {
      throw invalidSafetyState('malformed payload');
    }
    return { itemsSeen: d.n, firstFinding: { ruleId: d.f[0], itemIndex: d.f[1] } };
  }

  private mac(signed: string): Buffer {
    return createHmac('sha256', this.key).update(signed, 'ascii').digest();
  }
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= UINT32_MAX;
}
