import { createHash } from 'node:crypto';

/**
 * One classification rule. An item matches when *every* pattern matches somewhere in its text
 * (most rules have one pattern; "service-account JSON" needs two markers in the same item).
 */
export interface SafetyRule {
  /** Stable id, reported in findings and metrics; never reuse an id for a different meaning. */
  readonly id: string;
  /** What the rule detects, in words a user can read (used in finding messages). */
  readonly description: string;
  /**
   * Precompiled, non-global (no `lastIndex` state shared between calls) and linear-time: no
   * nested quantifiers, so a hostile 4 MiB item cannot make the scan backtrack exponentially.
   */
  readonly patterns: readonly RegExp[];
}

/**
 * Bumped by hand when a rule changes meaning without its source changing (e.g. a new allowlist
 * in code). Source changes are picked up by {@link RULESET_HASH} on their own.
 */
export const RULESET_REVISION = 1;

// Left guards: a secret glued to more token characters is part of a longer identifier, not a
// secret of that kind. Lookbehind is supported by V8 since Node 10.
const NOT_AFTER_ALNUM = '(?<![A-Za-z0-9])';
const NOT_AFTER_WORD = '(?<![A-Za-z0-9_])';

/**
 * The rule set. Order matters: findings for one item are reported in this order, and the first
 * finding of a conversation (carried in the state) is the earliest item's first matching rule.
 */
export const RULES: readonly SafetyRule[] = Object.freeze([
  {
    id: 'pem-private-key',
    description: 'a PEM-encoded private key',
    // The armour line only: prose such as "paste your private key" never has the dashes.
    patterns: [/-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----/],
  },
  {
    id: 'aws-access-key-id',
    description: 'an AWS access key id',
    // Blocks on the key id alone (the secret key is 40 base64 chars, indistinguishable from noise).
    // Ids ending in EXAMPLE are AWS's own documentation placeholders (AKIAIOSFODNN7EXAMPLE).
    patterns: [new RegExp(`${NOT_AFTER_ALNUM}(?:AKIA|ASIA)(?![A-Z0-9]{9}EXAMPLE)[A-Z0-9]{16}(?![A-Za-z0-9])`)],
  },
  {
    id: 'gcp-service-account-key',
    description: 'a Google Cloud service-account key file',
    // Both markers in one item. `\\?` also catches the JSON when it sits escaped inside a
    // function_call's arguments string (`{"content": "{\"type\": \"service_account\", ...`).
    patterns: [/\\?"type\\?"\s*:\s*\\?"service_account\\?"/, /\\?"private_key\\?"\s*:/],
  },
  {
    id: 'github-token',
    description: 'a GitHub access token',
    // Classic tokens (personal, OAuth, user-to-server, server-to-server, refresh) have 36
    // base62 chars today; GitHub reserves the right to grow them, hence the open upper range.
    patterns: [
      new RegExp(
        `${NOT_AFTER_WORD}(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})(?![A-Za-z0-9_])`,
      ),
    ],
  },
  {
    id: 'slack-token',
    description: 'a Slack API token',
    // Real tokens are dash-separated digit groups plus a random tail; 10+ chars after the prefix
    // keeps docs that merely mention the prefix ("bot tokens start with xoxb-") allowed.
    patterns: [new RegExp(`${NOT_AFTER_ALNUM}xox[baprs]-[0-9A-Za-z][0-9A-Za-z-]{9,250}`)],
  },
  {
    id: 'stripe-live-secret-key',
    description: 'a Stripe live secret key',
    // Live keys only: sk_test_ keys are meant to be shared in examples and CI.
    patterns: [new RegExp(`${NOT_AFTER_WORD}sk_live_[0-9A-Za-z]{24,247}(?![0-9A-Za-z])`)],
  },
  {
    id: 'azure-storage-connection-string',
    description: 'an Azure storage account key',
    // A storage account key is 64 random bytes: exactly 86 base64 chars plus "==" padding.
    patterns: [/AccountKey=[A-Za-z0-9+/]{86}==/],
  },
] satisfies SafetyRule[]);

/**
 * Identifies this rule set in every state; a state made under other rules is refused, because its
 * "nothing found so far" would not hold under the new rules. Short: it travels on every turn.
 */
export const RULESET_HASH: string = hashRules(RULES, RULESET_REVISION);

/** Hashes ids, pattern sources and flags (exported for tests that build other rule sets). */
export function hashRules(rules: readonly SafetyRule[], revision: number): string {
  const h = createHash('sha256');
  h.update(`revision:${revision}\n`);
  for (const rule of rules) {
    h.update(`${rule.id}\n`);
    for (const p of rule.patterns) h.update(`/${p.source}/${p.flags}\n`);
  }
  return h.digest('base64url').slice(0, 16);
}
