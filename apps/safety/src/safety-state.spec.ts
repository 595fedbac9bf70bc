import { DomainError } from '@fastloop/service-kit';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { MAX_STATE_BYTES, SafetyStateCodec } from './safety-state';

const SECRET = 'test-secret-test-secret';
const codec = new SafetyStateCodec(SECRET, 'ruleset-a');

function rejection(bytes: Uint8Array, c = codec): DomainError {
  try {
    c.decode(bytes);
  } catch (err) {
    return err as DomainError;
  }
  throw new Error('decode accepted the state');
}

function expectInvalid(bytes: Uint8Array, reason: string, c = codec): void {
  const err = rejection(bytes, c);
  expect(err).toBeInstanceOf(DomainError);
  expect(err.code).toBe('invalid_safety_state');
  expect(err.grpcStatus).toBe(GrpcStatus.INVALID_ARGUMENT);
  expect(err.message).toContain(reason);
}

describe('SafetyStateCodec', () => {
  it('reads empty bytes as a new conversation', () => {
    expect(codec.decode(Buffer.alloc(0))).toEqual({ itemsSeen: 0, firstFinding: null });
  });

  it('round-trips items seen and the first finding', () => {
    const content = { itemsSeen: 12, firstFinding: { ruleId: 'aws-access-key-id', itemIndex: 3 } };
    expect(codec.decode(codec.encode(content))).toEqual(content);
    expect(codec.decode(codec.encode({ itemsSeen: 4, firstFinding: null }))).toEqual({ itemsSeen: 4, firstFinding: null });
  });

  it('encodes deterministically and starts with its version', () => {
    const a = codec.encode({ itemsSeen: 2, firstFinding: null });
    expect(a.equals(codec.encode({ itemsSeen: 2, firstFinding: null }))).toBe(true);
    expect(a.toString('ascii').startsWith('v1.')).toBe(true);
    expect(a.length).toBeLessThan(MAX_STATE_BYTES);
  });

  it('refuses a state whose payload was altered (bad MAC)', () => {
    const [v, payload, mac] = codec.encode({ itemsSeen: 9, firstFinding: { ruleId: 'slack-token', itemIndex: 1 } }).toString().split('.');
    const forged = Buffer.from(JSON.stringify({ r: 'ruleset-a', n: 9, f: null })).toString('base64url');
    expect(forged).not.toBe(payload);
    expectInvalid(Buffer.from(`${v}.${forged}.${mac}`), 'bad MAC');
  });

  it('refuses a state signed with another secret', () => {
    const other = new SafetyStateCodec('another-secret-value', 'ruleset-a');
    expectInvalid(other.encode({ itemsSeen: 1, firstFinding: null }), 'bad MAC');
  });

  it('refuses an unknown version', () => {
    const [, payload, mac] = codec.encode({ itemsSeen: 1, firstFinding: null }).toString().split('.');
    expectInvalid(Buffer.from(`v2.${payload}.${mac}`), 'unknown version');
  });

  it('refuses a state made under a different rule set', () => {
    const older = new SafetyStateCodec(SECRET, 'ruleset-b');
    expectInvalid(older.encode({ itemsSeen: 1, firstFinding: null }), 'different rule set');
  });

  it('refuses garbage, oversized states and findings beyond the items seen', () => {
    expectInvalid(Buffer.from('not a state'), 'malformed');
    expectInvalid(Buffer.alloc(MAX_STATE_BYTES + 1, 0x41), 'too large');
    expectInvalid(codec.encode({ itemsSeen: 2, firstFinding: { ruleId: 'x', itemIndex: 2 } }), 'malformed payload');
  });
});
