import { RULES, RULESET_HASH, hashRules, RULESET_REVISION } from './rules';
import { matchingRules } from './scan';
import {
  awsAccessKeyId,
  azureStorageConnectionString,
  FAKE_SECRET_BY_RULE,
  filler,
  gcpServiceAccountJson,
  githubFineGrainedToken,
  githubToken,
  pemPrivateKey,
  slackToken,
  stripeLiveSecretKey,
} from './testing/fake-secrets';

const ids = (text: string) => matchingRules(text).map((r) => r.id);

describe('RULES', () => {
  it('have unique ids and a fake secret for each', () => {
    expect(new Set(RULES.map((r) => r.id)).size).toBe(RULES.length);
    expect(Object.keys(FAKE_SECRET_BY_RULE).sort()).toEqual(RULES.map((r) => r.id).sort());
  });

  it('use only non-global patterns, so no lastIndex state leaks from one call to the next', () => {
    for (const rule of RULES) for (const p of rule.patterns) expect(p.global || p.sticky).toBe(false);
  });

  it('match each fake secret with its own rule, even twice in a row', () => {
    for (const [id, make] of Object.entries(FAKE_SECRET_BY_RULE)) {
      const text = `here it is: ${make()} thanks`;
      expect(ids(text)).toContain(id);
      expect(ids(text)).toContain(id);
    }
  });

  it('hash to a value that changes with the revision or the patterns', () => {
    expect(hashRules(RULES, RULESET_REVISION)).toBe(RULESET_HASH);
    expect(hashRules(RULES, RULESET_REVISION + 1)).not.toBe(RULESET_HASH);
    expect(hashRules(RULES.slice(1), RULESET_REVISION)).not.toBe(RULESET_HASH);
  });

  it('allow ordinary prose about secrets', () => {
    const prose = [
      'Paste your private key into the config, then rotate the AWS access key.',
      'The service account needs a private_key field; see the GCP docs.',
      'GitHub tokens start with ghp_ and Slack bot tokens with xoxb- prefixes.',
      'Use sk_test keys in CI and an AccountKey from the portal.',
    ];
    for (const text of prose) expect(ids(text)).toEqual([]);
  });
});

describe('rule pem-private-key', () => {
  it.each(['RSA ', 'EC ', 'DSA ', 'OPENSSH ', 'ENCRYPTED ', 'PGP ', ''])('blocks a %sPRIVATE KEY armour line', (kind) => {
    expect(ids(pemPrivateKey(kind))).toEqual(['pem-private-key']);
  });

  it('blocks a PGP private key block', () => {
    expect(ids(pemPrivateKey('PGP ', ' BLOCK'))).toEqual(['pem-private-key']);
  });

  it('allows public keys, certificates and the words without the armour', () => {
    const dashes = '-'.repeat(5);
    expect(ids(`${dashes}BEGIN PUBLIC KEY${dashes}`)).toEqual([]);
    expect(ids(`${dashes}BEGIN CERTIFICATE${dashes}`)).toEqual([]);
    expect(ids('BEGIN RSA PRIVATE KEY')).toEqual([]);
  });
});

describe('rule aws-access-key-id', () => {
  it('blocks AKIA and ASIA key ids, alone or in an assignment', () => {
    expect(ids(awsAccessKeyId('AKIA'))).toEqual(['aws-access-key-id']);
    expect(ids(`aws_access_key_id=${awsAccessKeyId('ASIA')}`)).toEqual(['aws-access-key-id']);
    expect(ids(`{"AccessKeyId":"${awsAccessKeyId('ASIA')}"}`)).toEqual(['aws-access-key-id']);
  });

  it('allows ids of the wrong length or case, glued to other characters, or AWS documentation examples', () => {
    expect(ids(awsAccessKeyId('AKIA', filler(15, 'ABCDEFGHIJ')))).toEqual([]);
    expect(ids(awsAccessKeyId('AKIA', filler(17, 'ABCDEFGHIJ')))).toEqual([]);
    expect(ids(awsAccessKeyId('AKIA', filler(16, 'abcdefghij')))).toEqual([]);
    expect(ids('X' + awsAccessKeyId())).toEqual([]);
    expect(ids(awsAccessKeyId('AKIA', 'IOSFODNN7' + 'EXAMPLE'))).toEqual([]);
  });
});

describe('rule gcp-service-account-key', () => {
  it('blocks a service-account key file', () => {
    expect(ids(gcpServiceAccountJson()).sort()).toEqual(['gcp-service-account-key', 'pem-private-key']);
  });

  it('blocks the key file when it sits escaped inside function_call arguments', () => {
    const args = JSON.stringify({ path: 'key.json', content: gcpServiceAccountJson().replace(/-----BEGIN/g, '--') });
    expect(ids(args)).toEqual(['gcp-service-account-key']);
  });

  it('allows a service-account JSON without a private key, and a private key field of another type', () => {
    const q = '"';
    expect(ids(`{${q}type${q}: ${q}service_account${q}, ${q}client_email${q}: ${q}a@b${q}}`)).toEqual([]);
    expect(ids(`{${q}type${q}: ${q}authorized_user${q}, ${q}private_key${q}: ${q}x${q}}`)).toEqual([]);
  });
});

describe('rule github-token', () => {
  it.each(['ghp', 'gho', 'ghu', 'ghs', 'ghr'] as const)('blocks a %s_ token', (kind) => {
    expect(ids(`token: ${githubToken(kind)}`)).toEqual(['github-token']);
  });

  it('blocks a fine-grained personal access token', () => {
    expect(ids(`GH_TOKEN=${githubFineGrainedToken()}`)).toEqual(['github-token']);
  });

  it('allows short bodies, unknown prefixes and identifiers that merely contain the prefix', () => {
    expect(ids(githubToken('ghp', filler(20)))).toEqual([]);
    expect(ids('ghx_' + filler(36))).toEqual([]);
    expect(ids('my_' + githubToken())).toEqual([]);
  });
});

describe('rule slack-token', () => {
  it.each(['b', 'a', 'p', 'r', 's'] as const)('blocks an xox%s- token', (kind) => {
    expect(ids(`SLACK_TOKEN=${slackToken(kind)}`)).toEqual(['slack-token']);
  });

  it('allows the bare prefix and other letters', () => {
    expect(ids('xo' + 'xb-')).toEqual([]);
    expect(ids('xo' + 'xz-' + filler(30))).toEqual([]);
  });
});

describe('rule stripe-live-secret-key', () => {
  it('blocks a live secret key', () => {
    expect(ids(`STRIPE_KEY=${stripeLiveSecretKey()}`)).toEqual(['stripe-live-secret-key']);
  });

  it('allows test keys, publishable keys and short bodies', () => {
    expect(ids('sk_' + 'test_' + filler(24))).toEqual([]);
    expect(ids('pk_' + 'live_' + filler(24))).toEqual([]);
    expect(ids(stripeLiveSecretKey(filler(10)))).toEqual([]);
  });
});

describe('rule azure-storage-connection-string', () => {
  it('blocks a connection string with an account key', () => {
    expect(ids(azureStorageConnectionString())).toEqual(['azure-storage-connection-string']);
  });

  it('allows placeholders and keys of the wrong length', () => {
    expect(ids('Account' + 'Key=<your-account-key>')).toEqual([]);
    expect(ids('Account' + 'Key=' + filler(85) + '==')).toEqual([]);
  });
});
