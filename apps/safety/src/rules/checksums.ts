import { crc32 } from 'node:zlib';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `n` in base 62 (0-9A-Za-z), left-padded with '0' to `width`. */
export function base62(n: number, width: number): string {
  let out = '';
  for (let v = n >>> 0; v > 0; v = Math.floor(v / 62)) out = BASE62[v % 62] + out;
  return out.padStart(width, '0');
}

/**
 * GitHub's (and npm's) token checksum: the last 6 characters are the CRC32 of the 30 random
 * characters before them, in base 62. A random 36-character string passes with probability
 * 62^-6, so a match that fails is a lookalike (a hash, an id), not a token.
 */
export function hasBase62Crc32(token: string): boolean {
  const body = token.slice(token.indexOf('_') + 1);
  if (body.length !== 36) return false;
  return base62(crc32(body.slice(0, 30)), 6) === body.slice(30);
}

/** Shannon entropy of `s` in bits per character. */
export function entropyBits(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

// Values people paste in docs and examples instead of a real secret.
const PLACEHOLDER =
  /example|placeholder|sample|dummy|changeme|change_me|your[_-]?|redacted|insert|replace|xxxx|\*\*\*|<[^>]*>|\$\{|\{\{|%\(|^\$[A-Z_]+$|todo|fake|test|secret|password|passwd|token/i;

/** True for values that read like a placeholder (`your-api-key`, `<password>`, `${TOKEN}`, `xxxx`). */
export function isPlaceholder(value: string): boolean {
  if (PLACEHOLDER.test(value)) return true;
  // One character repeated (aaaaaaa…, 0000…) or a counting run (0123456789, abcdef).
  return new Set(value).size <= 3 || /0123|1234|2345|abcd|bcde/i.test(value);
}

/**
 * A generic assignment's value is secret-like when it is long, not a placeholder, mixes character
 * classes and has high entropy (random keys ≈ 4.5–6 bits/char; words and paths stay under 3.5).
 */
export function looksRandom(value: string, minBits = 3.5): boolean {
  if (value.length < 16 || isPlaceholder(value) || /[A-Za-z]{2}\.[A-Za-z]{2}/.test(value)) return false;
  // Code (`tokens = profile.renderCompletion`) has letters only; keys have digits among letters.
  const digits = value.replace(/[^0-9]/g, '').length;
  return digits >= 2 && digits < value.length - 4 && entropyBits(value) >= minBits;
}

/** A JWT's header segment decodes to a JSON object naming an algorithm or a type. */
export function isJwtHeader(segment: string): boolean {
  try {
    const header: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && ('alg' in header || 'typ' in header);
  } catch {
    return false;
  }
}
