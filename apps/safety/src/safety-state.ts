import { createCipheriv, createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { invalidSafetyState } from './errors';
import { MAX_WINDOW } from './rules/rule';
import { STREAMS, type StreamName } from './streams';

/** Where a stream stands after the items classified so far. */
export interface StreamState {
  /** Characters the stream has had (UTF-16 code units). */
  readonly len: number;
  /** Its last `MAX_WINDOW - 1` characters: what a match straddling the next text needs. */
  readonly tail: string;
  /** `[item index, stream position]` of the items the tail overlaps, in order (to place findings). */
  readonly items: readonly (readonly [number, number])[];
  /** Injection points of settled signals. */
  readonly score: number;
  /** The score has reached the threshold (reported once per stream). */
  readonly crossed: boolean;
}

/** The conversation's earliest settled blocking finding (item, offset, rule order) and its span. */
export interface BlockKey {
  readonly ruleId: string;
  readonly itemIndex: number;
  readonly start: number;
  readonly ruleIndex: number;
  readonly endItemIndex: number;
  readonly end: number;
  /** Injection score when the stream crossed the threshold (0 for other categories). */
  readonly score: number;
}

/** What a conversation's state says about the items already classified. */
export interface SafetyStateContent {
  readonly itemsSeen: number;
  readonly streams: Readonly<Partial<Record<StreamName, StreamState>>>;
  readonly block: BlockKey | null;
  /** The guard model's worker session, when a guard judged this conversation. */
  readonly guard?: { readonly key: string; readonly prefixLen: number };
}

/** Wire version prefix. A new layout gets a new prefix; old ones are refused, never guessed at. */
export const STATE_VERSION = 'v2';

/**
 * Largest state accepted before any work is done. Worst case: three streams of 255 escaped
 * characters and 255 item positions each (≈ 25 KiB); typical states are under 2 KiB.
 */
export const MAX_STATE_BYTES = 48 * 1024;

const UINT32_MAX = 0xffff_ffff;

/**
 * States this process encoded lately, by codec and bytes, as decoding those bytes gives them: the
 * edge sends each state back on its next call (an answer's to the output's moderation session, the
 * output's to the next turn's Classify), and decoding (AES, HMAC, JSON, shape checks) was ~10% of
 * an agent turn's input call. One bound for the process, as codecs come per policy, and it counts
 * bytes as well as states: a state is ~1–2 KB, but one can be made to reach MAX_STATE_BYTES, and
 * 2,048 of those would hold ~100 MB. The oldest go first; a state not remembered is decoded in full.
 */
const recentStates = new Map<string, SafetyStateContent>();
const RECENT_STATES = 2048;
/** Characters of the remembered states' keys (≈ their bytes, twice over with the content). */
const RECENT_STATE_CHARS = 4 * 1024 * 1024;
let recentChars = 0;
let codecs = 0;
const EMPTY_STREAM: StreamState = Object.freeze({ len: 0, tail: '', items: [], score: 0, crossed: false });

/**
 * Encodes, encrypts and authenticates the opaque state the edge carries between turns.
 *
 * The state holds recent conversation text (stream tails), so it is encrypted, not only signed:
 * a deterministic SIV construction — tag = HMAC-SHA256(k_mac, version ‖ plaintext), ciphertext =
 * AES-256-CTR(k_enc, iv = tag[0..16), plaintext) — so equal contents give byte-identical states
 * (the incremental-equals-full property compares them) without a random nonce.
 * Layout (ASCII): `v2.<ciphertext b64url>.<tag b64url>`.
 */
export class SafetyStateCodec {
  // KeyObjects, not Buffers: given a Buffer, every createHmac / createCipheriv imports the key
  // anew (~100 µs each on Node 24, four per output batch); a KeyObject is imported once.
  private readonly macKey: KeyObject;
  private readonly encKey: KeyObject;
  /** Keys this codec's entries in {@link recentStates}: another secret or policy never reads them. */
  private readonly memoPrefix = `${codecs++}.`;

  /**
   * @param secret `SAFETY_STATE_SECRET`; states made with another key are refused.
   * @param policyHash the rules and policy the states vouch for; states from others are refused.
   */
  constructor(
    secret: string | Buffer,
    private readonly policyHash: string,
  ) {
    this.macKey = createSecretKey(createHmac('sha256', secret).update('fastloop-safety-state-mac').digest());
    this.encKey = createSecretKey(createHmac('sha256', secret).update('fastloop-safety-state-enc').digest());
  }

  static readonly EMPTY: SafetyStateContent = Object.freeze({ itemsSeen: 0, streams: {}, block: null });

  static stream(content: SafetyStateContent, name: StreamName): StreamState {
    return content.streams[name] ?? EMPTY_STREAM;
  }

  encode(content: SafetyStateContent): Buffer {
    if (!isCount(content.itemsSeen)) throw new RangeError(`itemsSeen out of uint32 range: ${content.itemsSeen}`);
    const s: Record<string, unknown[]> = {};
    for (const name of STREAMS) {
      const st = content.streams[name];
      if (st && st.len > 0) s[name] = [st.len, st.tail, st.items, st.score, st.crossed ? 1 : 0];
    }
    const b = content.block;
    const payload = {
      r: this.policyHash,
      n: content.itemsSeen,
      s,
      b: b ? [b.ruleId, b.itemIndex, b.start, b.ruleIndex, b.endItemIndex, b.end, b.score] : null,
      ...(content.guard ? { g: [content.guard.key, content.guard.prefixLen] } : {}),
    };
    const plain = Buffer.from(JSON.stringify(payload), 'utf8');
    const tag = this.tag(plain);
    const cipher = createCipheriv('aes-256-ctr', this.encKey, tag.subarray(0, 16)).update(plain);
    const text = `${STATE_VERSION}.${cipher.toString('base64url')}.${tag.toString('base64url')}`;
    this.remember(text, payload);
    return Buffer.from(text, 'ascii');
  }

  /**
   * Remembers what decoding `text` will give: the payload read by the very checks a decode makes
   * (a payload they refuse is not remembered, so its decode refuses it), as a frozen copy. The
   * payload is JSON data, so reading it is reading its JSON.
   */
  private remember(text: string, payload: object): void {
    let content: SafetyStateContent;
    try {
      content = frozenCopy(this.readObject(payload));
    } catch {
      return;
    }
    const key = this.memoPrefix + text;
    if (recentStates.has(key)) return;
    while (
      recentStates.size > 0 &&
      (recentStates.size >= RECENT_STATES || recentChars + key.length > RECENT_STATE_CHARS)
    ) {
      const oldest = recentStates.keys().next().value as string;
      recentStates.delete(oldest);
      recentChars -= oldest.length;
    }
    recentStates.set(key, content);
    recentChars += key.length;
  }

  /**
   * Verifies and reads a state; empty bytes are a new conversation.
   * @throws DomainError `invalid_safety_state` for anything not made by `encode` with this secret and policy.
   */
  decode(bytes: Uint8Array): SafetyStateContent {
    if (bytes.length === 0) return SafetyStateCodec.EMPTY;
    if (bytes.length > MAX_STATE_BYTES) throw invalidSafetyState('too large');
    const text = Buffer.from(bytes).toString('latin1');
    const known = recentStates.get(this.memoPrefix + text);
    if (known !== undefined) return known;
    const parts = text.split('.');
    if (parts.length !== 3) throw invalidSafetyState('malformed');
    const [version, body, tagText] = parts;
    if (version !== STATE_VERSION) throw invalidSafetyState('unknown version');
    const tag = Buffer.from(tagText, 'base64url');
    if (tag.length !== 32) throw invalidSafetyState('bad MAC');
    const plain = createCipheriv('aes-256-ctr', this.encKey, tag.subarray(0, 16)).update(
      Buffer.from(body, 'base64url'),
    );
    if (!timingSafeEqual(tag, this.tag(plain))) throw invalidSafetyState('bad MAC');
    return this.readPayload(plain);
  }

  private readPayload(plain: Buffer): SafetyStateContent {
    let parsed: unknown;
    try {
      parsed = JSON.parse(plain.toString('utf8'));
    } catch (cause) {
      throw invalidSafetyState('malformed payload', cause);
    }
    return this.readObject(parsed);
  }

  private readObject(parsed: unknown): SafetyStateContent {
    const d = parsed as { r?: unknown; n?: unknown; s?: unknown; b?: unknown; g?: unknown };
    // The MAC proves we wrote it; shapes are checked anyway so a bug can never become a verdict.
    if (typeof d !== 'object' || d === null) throw invalidSafetyState('malformed payload');
    if (d.r !== this.policyHash) throw invalidSafetyState('made under a different rule set or policy');
    if (!isCount(d.n) || typeof d.s !== 'object' || d.s === null) throw invalidSafetyState('malformed payload');
    const streams: Partial<Record<StreamName, StreamState>> = {};
    for (const [name, v] of Object.entries(d.s as Record<string, unknown>)) {
      if (!(STREAMS as readonly string[]).includes(name)) throw invalidSafetyState('malformed payload');
      streams[name as StreamName] = readStream(v);
    }
    const content = { itemsSeen: d.n, streams, block: readBlock(d.b, d.n) };
    if (d.g === undefined) return content;
    if (!Array.isArray(d.g) || d.g.length !== 2 || typeof d.g[0] !== 'string' || !isCount(d.g[1]))
      throw invalidSafetyState('malformed payload');
    return { ...content, guard: { key: d.g[0], prefixLen: d.g[1] } };
  }

  private tag(plain: Buffer): Buffer {
    return createHmac('sha256', this.macKey).update(`${STATE_VERSION}.`).update(plain).digest();
  }
}

/**
 * A frozen copy of `content`: one object may now be the result of several decodes, and the item
 * positions it read are the encoding caller's own arrays (a few pairs per stream), left as they are.
 */
function frozenCopy(content: SafetyStateContent): SafetyStateContent {
  const streams: Partial<Record<StreamName, StreamState>> = {};
  for (const name of STREAMS) {
    const st = content.streams[name];
    if (st)
      streams[name] = Object.freeze({
        ...st,
        items: Object.freeze(st.items.map((p) => Object.freeze([p[0], p[1]] as const))),
      });
  }
  return Object.freeze({
    ...content,
    streams: Object.freeze(streams),
    block: content.block && Object.freeze({ ...content.block }),
    ...(content.guard ? { guard: Object.freeze({ ...content.guard }) } : {}),
  });
}

function readStream(v: unknown): StreamState {
  if (!Array.isArray(v) || v.length !== 5) throw invalidSafetyState('malformed payload');
  const [len, tail, items, score, crossed] = v as unknown[];
  const ok =
    isCount(len) &&
    typeof tail === 'string' &&
    tail.length < MAX_WINDOW &&
    Array.isArray(items) &&
    items.every((p) => Array.isArray(p) && p.length === 2 && isCount(p[0]) && isCount(p[1])) &&
    isCount(score) &&
    (crossed === 0 || crossed === 1);
  if (!ok) throw invalidSafetyState('malformed payload');
  return { len, tail, items: items as [number, number][], score, crossed: crossed === 1 };
}

function readBlock(b: unknown, itemsSeen: number): BlockKey | null {
  if (b === null) return null;
  const ok =
    Array.isArray(b) &&
    b.length === 7 &&
    typeof b[0] === 'string' &&
    b.slice(1).every(isCount) &&
    b[1] < itemsSeen &&
    b[4] < itemsSeen;
  if (!ok) throw invalidSafetyState('malformed payload');
  const [ruleId, itemIndex, start, ruleIndex, endItemIndex, end, score] = b as [
    string,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return { ruleId, itemIndex, start, ruleIndex, endItemIndex, end, score };
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= UINT32_MAX;
}
