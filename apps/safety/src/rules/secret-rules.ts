import { hasBase62Crc32, isJwtHeader, isPlaceholder, looksRandom } from './checksums';
import type { Rule } from './rule';

/** A secret rule: case-sensitive unless `ignoreCase`; `window` is checked in rules.spec.ts. */
function secret(
  id: string,
  description: string,
  keywords: string[],
  source: string,
  window: number,
  extra: { ignoreCase?: boolean; verify?: (m: string) => boolean; lead?: number } = {},
): Rule {
  return {
    id,
    category: 'secret',
    description,
    keywords,
    pattern: new RegExp(source, extra.ignoreCase ? 'gi' : 'g'),
    window,
    ...(extra.verify ? { verify: extra.verify } : {}),
    ...(extra.lead ? { lead: extra.lead } : {}),
  };
}

/** The value after the last `:`/`=` of an assignment match, unquoted. */
function assignedValue(match: string): string {
  return match.replace(/^[\s\S]*?[:=]\s*["']?/, '');
}

const B64 = 'A-Za-z0-9+/';

/**
 * Credential kinds. Patterns start at the credential's distinctive prefix (no lookbehind: the
 * characters before a match may sit in an earlier item), read a bounded window, and use a
 * checksum or a placeholder/entropy check where the format allows. Order is report order.
 */
export const SECRET_RULES: readonly Rule[] = [
  secret(
    'private-key-block',
    'a PEM/OpenSSH private key block',
    ['private key'],
    '-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP |SSH2 ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----',
    60,
  ),
  secret('putty-private-key', 'a PuTTY private key file', ['putty-user-key-file'], 'PuTTY-User-Key-File-[23]: ', 23),
  secret(
    'age-secret-key',
    'an age encryption secret key',
    ['age-secret-key'],
    'AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}',
    74,
  ),
  // AWS ids are base32; ids ending in EXAMPLE are AWS's documentation placeholders.
  secret(
    'aws-access-key-id',
    'an AWS access key id',
    ['akia', 'asia', 'abia', 'acca'],
    '(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}',
    20,
    { verify: (m) => !m.endsWith('EXAMPLE') },
  ),
  // The pair: a key id followed closely by a 40-character secret (how they sit in credentials files and env dumps).
  secret(
    'aws-credential-pair',
    'an AWS access key id with its secret access key',
    ['akia', 'asia'],
    `(?:AKIA|ASIA)[A-Z2-7]{16}[^${B64}][\\s\\S]{0,100}?[^${B64}][${B64}]{40}(?![${B64}])`,
    164,
    { verify: (m) => !m.slice(0, 20).endsWith('EXAMPLE') && looksRandom(m.slice(-40), 4) },
  ),
  secret(
    'aws-secret-access-key',
    'an AWS secret access key',
    ['aws_secret', 'secretaccesskey', 'aws-secret'],
    `aws[_-]?secret[_-]?(?:access[_-]?)?key["']?\\s{0,3}[:=]\\s{0,3}["']?[${B64}]{40}(?![${B64}])`,
    81,
    { ignoreCase: true, verify: (m) => looksRandom(assignedValue(m), 4) },
  ),
  secret(
    'gcp-service-account-key',
    'a Google Cloud service-account key',
    ['private_key_id'],
    '\\\\?"private_key_id\\\\?"\\s{0,4}:\\s{0,4}\\\\?"[a-f0-9]{40}\\\\?"',
    72,
  ),
  secret('gcp-api-key', 'a Google API key', ['aiza'], 'AIza[0-9A-Za-z_-]{35}', 39),
  secret('google-oauth-client-secret', 'a Google OAuth client secret', ['gocspx-'], 'GOCSPX-[A-Za-z0-9_-]{28}', 35),
  secret('azure-storage-key', 'an Azure storage account key', ['accountkey='], `AccountKey=[${B64}]{86}==`, 99),
  secret(
    'azure-sas-token',
    'an Azure shared access signature',
    ['sig='],
    'sv=\\d{4}-\\d\\d-\\d\\d&[A-Za-z0-9=&%:._-]{0,150}?sig=[A-Za-z0-9%+/]{40,70}',
    240,
  ),
  secret(
    'azure-ad-client-secret',
    'an Azure AD (Entra) client secret',
    ['q~'],
    '[A-Za-z0-9_~.]{3}\\dQ~[A-Za-z0-9_~.-]{31,34}',
    40,
  ),
  secret(
    'github-token',
    'a GitHub token (classic, OAuth, user, app or refresh)',
    ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'],
    'gh[pousr]_[A-Za-z0-9]{36}',
    40,
    { verify: hasBase62Crc32 },
  ),
  secret(
    'github-fine-grained-token',
    'a GitHub fine-grained personal access token',
    ['github_pat_'],
    'github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}',
    93,
  ),
  secret(
    'gitlab-token',
    'a GitLab personal, deploy, runner or CI token',
    ['glpat-', 'gldt-', 'glrt-', 'glcbt-', 'glptt-'],
    'gl(?:pat|dt|rt|cbt|ptt)-[0-9A-Za-z_-]{20}',
    26,
  ),
  secret('slack-token', 'a Slack API token', ['xox'], 'xox[baprse]-[0-9]{8,14}-[0-9A-Za-z-]{8,120}', 142),
  // Slack's docs show T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX: a placeholder, not a webhook.
  secret(
    'slack-webhook',
    'a Slack incoming-webhook URL',
    ['hooks.slack.com'],
    'hooks\\.slack\\.com/services/T[A-Z0-9]{8,12}/B[A-Z0-9]{8,12}/[A-Za-z0-9]{24}',
    80,
    { verify: (m) => !isPlaceholder(m.slice(m.lastIndexOf('/') + 1)) },
  ),
  // Live keys only: sk_test_ keys are meant to be shared in examples and CI.
  secret(
    'stripe-secret-key',
    'a Stripe live secret or restricted key',
    ['sk_live_', 'rk_live_'],
    '[sr]k_live_[0-9A-Za-z]{24,99}',
    107,
  ),
  secret('twilio-api-key', 'a Twilio API key', ['sk'], 'SK[0-9a-f]{32}(?![0-9a-f])', 35),
  secret('sendgrid-api-key', 'a SendGrid API key', ['sg.'], 'SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}', 69),
  secret('mailchimp-api-key', 'a Mailchimp API key', ['-us'], '[0-9a-f]{32}-us[0-9]{1,2}(?![0-9])', 37),
  // Legacy keys carry "T3BlbkFJ" (base64 of "OpenAI"); project, service-account and admin keys a typed prefix.
  secret(
    'openai-api-key',
    'an OpenAI API key',
    ['sk-'],
    'sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}',
    57,
  ),
  secret(
    'anthropic-api-key',
    'an Anthropic API key',
    ['sk-ant-'],
    'sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{80}',
    95,
  ),
  secret('huggingface-token', 'a Hugging Face access token', ['hf_'], 'hf_[A-Za-z0-9]{34}(?![A-Za-z0-9])', 38, {
    verify: (m) => looksRandom(m.slice(3)),
  }),
  secret('npm-token', 'an npm access token', ['npm_'], 'npm_[A-Za-z0-9]{36}', 40, { verify: hasBase62Crc32 }),
  secret(
    'pypi-token',
    'a PyPI upload token',
    ['pypi-ageichlwaS5vcmc'.toLowerCase()],
    'pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50}',
    70,
  ),
  secret(
    'shopify-token',
    'a Shopify access token',
    ['shpat_', 'shpca_', 'shppa_', 'shpss_'],
    'shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}',
    38,
  ),
  secret(
    'digitalocean-token',
    'a DigitalOcean token',
    ['dop_v1_', 'doo_v1_', 'dor_v1_'],
    'do[por]_v1_[a-f0-9]{64}',
    71,
  ),
  secret('databricks-token', 'a Databricks access token', ['dapi'], 'dapi[a-f0-9]{32}(?![a-f0-9])', 37),
  // From the id's last digit: a variable-length digit run would match once per start. Telegram's
  // own examples (Bot API docs, bots tutorial) carry 32 characters after "AA"; issued tokens 32–33.
  secret('telegram-bot-token', 'a Telegram bot token', [':aa'], '[0-9]:AA[0-9A-Za-z_-]{32,33}', 37),
  secret('linear-api-key', 'a Linear API key', ['lin_api_'], 'lin_api_[A-Za-z0-9]{40}', 48),
  // The header run is matched atomically (lookahead + backreference): no backtracking through it
  // when no '.' follows, which made `eyJeyJeyJ…` cost 200 steps per start.
  secret('jwt', 'a JSON Web Token', ['eyj'], 'eyJ(?=([A-Za-z0-9_-]{10,200}))\\1\\.eyJ[A-Za-z0-9_-]{10}', 218, {
    verify: (m) => isJwtHeader(m.slice(0, m.indexOf('.'))),
  }),
  secret(
    'database-url-password',
    'a database URL with a password',
    ['://'],
    '(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\\+srv)?|rediss?|amqps?|mssql|sqlserver|jdbc:[a-z]{2,12})://[^\\s:/@\'"]{1,64}:[^\\s/@\'"]{1,128}@[^\\s/@\'"<>]',
    228,
    {
      ignoreCase: true,
      verify: (m) => !isPlaceholder(m.slice(m.indexOf(':', m.indexOf('://') + 3) + 1, m.lastIndexOf('@'))),
    },
  ),
  // Last: a named credential assigned a random-looking value. The match starts at the separator
  // before the name, so `client_secret` is one match, not one per keyword inside it.
  secret(
    'generic-secret-assignment',
    'a credential assigned in code or config',
    ['key', 'secret', 'token', 'passw', 'credential'],
    `[\\s"'{,;(\\[][A-Za-z0-9_.-]{0,30}?(?:api[_-]?key|access[_-]?key|private[_-]?key|secret|token|passw(?:or)?d|credential)[A-Za-z0-9_.-]{0,20}?["']?\\s{0,3}[:=]\\s{0,3}["']?[A-Za-z0-9/+_=.~-]{16,80}`,
    160,
    { ignoreCase: true, lead: 1, verify: (m) => looksRandom(assignedValue(m)) },
  ),
];
