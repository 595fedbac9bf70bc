import { DomainError } from '@fastloop/service-kit';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { MAX_STATE_BYTES, SafetyStateCodec, type SafetyStateContent } from './safety-state';
import { STREAMS } from './streams';

const SECRET = 'test-secret-test-secret';
const codec = new SafetyStateCodec(SECRET, 'policy-a');

const content: SafetyStateContent = {
  itemsSeen: 12,
  streams: {
    input: {
      len: 40,
      tail: 'the last characters of the input stream',
      items: [
        [3, 0],
        [7, 20],
      ],
      score: 0,
      crossed: false,
    },
    tool: { len: 5, tail: 'hello', items: [[4, 0]], score: 11, crossed: true },
  },
  block: { ruleId: 'aws-access-key-id', itemIndex: 3, start: 2, ruleIndex: 4, endItemIndex: 7, end: 6, score: 0 },
};

function expectInvalid(bytes: Uint8Array, reason: string, c = codec): void {
  let err: DomainError | undefined;
  try {
    c.decode(bytes);
  } catch (e) {
    err = e as DomainError;
  }
  expect(err).toBeInstanceOf(DomainError);
  expect(err?.code).toBe('invalid_safety_state');
  expect(err?.grpcStatus).toBe(GrpcStatus.INVALID_ARGUMENT);
  expect(err?.message).toContain(reason);
}

describe('SafetyStateCodec', () => {
  it('reads empty bytes as a new conversation', () => {
    expect(codec.decode(Buffer.alloc(0))).toEqual({ itemsSeen: 0, streams: {}, block: null });
  });

  it('round-trips stream tails, scores and the first blocking finding', () => {
    expect(codec.decode(codec.encode(content))).toEqual(content);
  });

  it('gives for a state it encoded lately what a full decode gives, frozen, and only to itself', () => {
    const bytes = codec.encode(content);
    // Another codec of the same secret and policy has not encoded it: it decodes it in full.
    const full = new SafetyStateCodec(SECRET, 'policy-a').decode(bytes);
    const remembered = codec.decode(bytes);
    expect(remembered).toStrictEqual(full);
    expect(Object.isFrozen(remembered.streams.input?.items)).toBe(true);
    expect(() => (remembered.streams.input?.items as [number, number][]).push([9, 9])).toThrow(TypeError);
    expect(Object.isFrozen(content.streams.input?.items)).toBe(false); // the caller's own arrays are left as they are
    // The same bytes under another secret or policy are refused, remembered here or not.
    expectInvalid(bytes, 'bad MAC', new SafetyStateCodec('another-secret-value', 'policy-a'));
    expectInvalid(bytes, 'different rule set', new SafetyStateCodec(SECRET, 'policy-b'));
  });

  it('remembers a bounded number of bytes: large states push the oldest out (decoded in full again)', () => {
    // ~25 KB each (three streams of 254 escaped characters and 255 item positions): 4 MiB of keys hold ~170.
    const large = (n: number): SafetyStateContent => {
      const stream = {
        len: 100_000,
        tail: '\u0001'.repeat(254),
        items: Array.from({ length: 255 }, (_, i) => [i, i * 400] as [number, number]),
        score: 0,
        crossed: false,
      };
      return { itemsSeen: 1_000 + n, streams: Object.fromEntries(STREAMS.map((name) => [name, stream])), block: null };
    };
    const own = new SafetyStateCodec(SECRET, 'policy-large');
    const first = own.encode(large(0));
    let last = first;
    for (let n = 1; n < 400; n++) last = own.encode(large(n));
    expect(Object.isFrozen(own.decode(last))).toBe(true);
    const again = own.decode(first);
    expect(Object.isFrozen(again)).toBe(false); // decoded in full: no longer remembered
    expect(again).toEqual(large(0));
  });

  it('encodes deterministically, starts with its version and never shows the text it carries', () => {
    const a = codec.encode(content);
    expect(a.equals(codec.encode(content))).toBe(true);
    expect(a.toString('ascii').startsWith('v2.')).toBe(true);
    const decodedPayload = Buffer.from(a.toString('ascii').split('.')[1], 'base64url').toString('latin1');
    expect(decodedPayload).not.toContain('last characters');
    expect(a.length).toBeLessThan(MAX_STATE_BYTES);
  });

  it('refuses a state whose ciphertext was altered (bad MAC)', () => {
    const [v, body, tag] = codec.encode(content).toString().split('.');
    const flipped = Buffer.from(body, 'base64url');
    flipped[3] ^= 1;
    expectInvalid(Buffer.from(`${v}.${flipped.toString('base64url')}.${tag}`), 'bad MAC');
  });

  it('refuses a state made with another secret', () => {
    expectInvalid(new SafetyStateCodec('another-secret-value', 'policy-a').encode(content), 'bad MAC');
  });

  it('refuses an unknown version', () => {
    const [, body, tag] = codec.encode(content).toString().split('.');
    expectInvalid(Buffer.from(`v1.${body}.${tag}`), 'unknown version');
  });

  it('refuses a state made under different rules or policy', () => {
    expectInvalid(new SafetyStateCodec(SECRET, 'policy-b').encode(content), 'different rule set');
  });

  it('refuses garbage, oversized states and findings beyond the items seen', () => {
    expectInvalid(Buffer.from('not a state'), 'malformed');
    expectInvalid(Buffer.alloc(MAX_STATE_BYTES + 1, 0x41), 'too large');
    expectInvalid(codec.encode({ ...content, itemsSeen: 3 }), 'malformed payload');
  });
});
