import type { Rule } from './rule';
import { scanStream } from './stream-scan';

/**
 * Shortest and longest encoded runs decoded. 16 base64 characters are 12 bytes (shorter holds no
 * credential of ours); the longest run keeps the rule inside the 256-character window. Longer runs
 * (images, bundles, certificates) are not decoded: cost stays linear, and a blob is not a key.
 */
export const BASE64_RUN = { min: 16, max: 252 } as const;
export const HEX_RUN = { min: 32, max: 254 } as const;

const B64 = 'A-Za-z0-9+/_\\-';
const HEX = '0-9A-Fa-f';

/**
 * Decoded bytes must be printable ASCII (tabs and newlines included), as every credential and
 * injection phrase the rules know is: random bytes (hashes, images, a word read as base64) fail
 * within a few bytes, without the cost of a UTF-8 decoder's exception.
 */
function decodedText(bytes: Buffer): string | null {
  for (const b of bytes) if (b > 0x7e || (b < 0x20 && (b < 0x09 || b > 0x0d))) return null;
  return bytes.toString('latin1');
}

/**
 * Whether every byte `run` encodes can be below 0x80, read from one character per byte group
 * without decoding: in base64, each 4-character group's first character holds its first byte's
 * top 6 bits (below 0x80: `A`–`Z`, `a`–`f`); in hex, each pair's first digit is 0–7. Most runs of
 * letters (identifiers, paths, words) fail within a few groups, before any allocation.
 */
function mayBeAscii(run: string, step: number, ok: RegExp): boolean {
  for (let i = 0; i < run.length; i += step) if (!ok.test(run[i])) return false;
  return true;
}
const B64_ASCII_LEAD = /[A-Za-f=]/;
const HEX_ASCII_LEAD = /[0-7]/;

/** `run` decoded as base64 (standard or URL-safe, padding optional), or null when it is not text. */
export function decodeBase64(run: string): string | null {
  if (!mayBeAscii(run, 4, B64_ASCII_LEAD)) return null;
  const body = run.replace(/=+$/, '');
  if (body.length % 4 === 1) return null;
  return decodedText(Buffer.from(body.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
}

/** `run` decoded as hex (an odd last digit is dropped), or null when it is not text. */
export function decodeHex(run: string): string | null {
  if (!mayBeAscii(run, 2, HEX_ASCII_LEAD)) return null;
  return decodedText(Buffer.from(run.length % 2 === 0 ? run : run.slice(0, -1), 'hex'));
}

const BASE64_RUN_SOURCE = `[^${B64}=][${B64}]{${BASE64_RUN.min},${BASE64_RUN.max}}={0,2}(?![${B64}=])`;
const HEX_RUN_SOURCE = `[^${HEX}][${HEX}]{${HEX_RUN.min},${HEX_RUN.max}}(?![${HEX}])`;
/** One pattern object for every encoded-run rule: the scan makes one pass for all of them (stream-scan.ts). */
const ENCODED_RUN = new RegExp(`${BASE64_RUN_SOURCE}|${HEX_RUN_SOURCE}`, 'g');

/**
 * A rule matching a bounded run of base64 or hex whose decoding contains a match of one of
 * `inner` (decoded once: the inner rules are never encoded ones, so nothing is decoded twice).
 * The pattern reads the character before the run (`lead`: the run must begin there, not inside a
 * longer one), the run, and the character after it; a run at the very start of a stream, with no
 * character before it, is not decoded.
 */
function encodedRule(
  id: string,
  category: Rule['category'],
  description: string,
  inner: readonly Rule[],
  weight?: number,
): Rule {
  const plain = inner.filter((r) => !r.raw);
  const contains = (decoded: string | null) => decoded !== null && scanStream(decoded, 0, plain).length > 0;
  return {
    id,
    category,
    description,
    keywords: [],
    pattern: ENCODED_RUN,
    window: 256,
    lead: 1,
    // Hex digits are base64 characters too: a hex run is tried both ways.
    verify: (m) => {
      const run = m.slice(1);
      return contains(decodeBase64(run)) || (/^[0-9A-Fa-f]+$/.test(run) && contains(decodeHex(run)));
    },
    ...(weight !== undefined ? { weight } : {}),
  };
}

const encodedSecrets = new WeakMap<readonly Rule[], Rule>();
const encodedInjections = new WeakMap<readonly Rule[], Rule>();

/** The secret rules' encoded form (one rule object per rule set, so its prefix automaton is built once). */
export function encodedSecretRule(secrets: readonly Rule[]): Rule {
  let rule = encodedSecrets.get(secrets);
  if (!rule)
    encodedSecrets.set(
      secrets,
      (rule = encodedRule('encoded-secret', 'secret', 'a secret encoded in base64 or hex', secrets)),
    );
  return rule;
}

/**
 * The injection signals' encoded form; its weight is the strongest plain signal's (ignore previous
 * instructions): words of an injection are rarely base64-encoded innocently.
 */
export function encodedInjectionRule(signals: readonly Rule[]): Rule {
  let rule = encodedInjections.get(signals);
  if (!rule)
    encodedInjections.set(
      signals,
      (rule = encodedRule(
        'encoded-injection',
        'injection',
        'an injection phrase encoded in base64 or hex',
        signals,
        6,
      )),
    );
  return rule;
}
