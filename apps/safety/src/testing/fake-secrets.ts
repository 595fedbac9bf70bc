/**
 * Builders of fake secrets for tests. Every value is assembled from pieces at run time so that
 * no source file holds a string that secret scanners (ours, GitHub push protection) would flag.
 * Bodies are caller-chosen or filler; none of these are real credentials.
 */

const UPPER_ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const ALNUM = 'abcdefghijklmnopqrstuvwxyz' + UPPER_ALNUM;

/** Deterministic filler of `length` chars drawn from `alphabet`, varied by `seed`. */
export function filler(length: number, alphabet = ALNUM, seed = 7): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[(i * 31 + seed * 17 + ((i * i) % 13)) % alphabet.length];
  return out;
}

/** `-----BEGIN <kind>PRIVATE KEY-----` plus a fake body; `kind` like `'RSA '` or `''`. */
export function pemPrivateKey(kind = 'RSA ', suffix = ''): string {
  const dashes = '-'.repeat(5);
  return `${dashes}BEGIN ${kind}PRIVATE` + ` KEY${suffix}${dashes}\n${filler(64)}\n${dashes}END ${kind}PRIVATE` + ` KEY${suffix}${dashes}`;
}

/** An AWS-style access key id: prefix + 16 upper-case alphanumerics. */
export function awsAccessKeyId(prefix: 'AKIA' | 'ASIA' = 'AKIA', body = filler(16, UPPER_ALNUM)): string {
  return prefix.slice(0, 2) + prefix.slice(2) + body;
}

/** A GCP service-account key file (JSON text) with a fake key. */
export function gcpServiceAccountJson(): string {
  return JSON.stringify(
    {
      type: 'service_' + 'account',
      project_id: 'demo-project',
      ['private_' + 'key_id']: filler(40, 'abcdef0123456789'),
      ['private_' + 'key']: pemPrivateKey(''),
      client_email: 'demo@demo-project.iam.gserviceaccount.com',
    },
    null,
    2,
  );
}

/** A GitHub classic token (`ghp`, `gho`, `ghu`, `ghs`, `ghr`) with a 36-char body. */
export function githubToken(kind: 'ghp' | 'gho' | 'ghu' | 'ghs' | 'ghr' = 'ghp', body = filler(36)): string {
  return `${kind}_` + body;
}

/** A GitHub fine-grained personal access token. */
export function githubFineGrainedToken(): string {
  return 'github_' + 'pat_' + filler(22, ALNUM, 3) + '_' + filler(59, ALNUM, 5);
}

/** A Slack token such as a bot token (`b`). */
export function slackToken(kind: 'b' | 'a' | 'p' | 'r' | 's' = 'b'): string {
  return `xo` + `x${kind}-` + filler(12, '0123456789') + '-' + filler(13, '0123456789', 2) + '-' + filler(24);
}

/** A Stripe live secret key. */
export function stripeLiveSecretKey(body = filler(24)): string {
  return 'sk_' + 'live_' + body;
}

/** An Azure storage connection string with a fake 64-byte account key. */
export function azureStorageConnectionString(): string {
  const key = Buffer.from(filler(64)).toString('base64');
  return 'DefaultEndpointsProtocol=https;AccountName=demo;' + 'Account' + `Key=${key};EndpointSuffix=core.windows.net`;
}

/** One fake secret per rule id, for generators and table tests. */
export const FAKE_SECRET_BY_RULE: Readonly<Record<string, () => string>> = {
  'pem-private-key': () => pemPrivateKey(),
  'aws-access-key-id': () => awsAccessKeyId(),
  'gcp-service-account-key': () => gcpServiceAccountJson(),
  'github-token': () => githubToken(),
  'slack-token': () => slackToken(),
  'stripe-live-secret-key': () => stripeLiveSecretKey(),
  'azure-storage-connection-string': () => azureStorageConnectionString(),
};
