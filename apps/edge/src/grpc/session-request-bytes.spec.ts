import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { responsesV1 } from '@fastloop/proto';
import { decodeSessionRequestBytes } from './session-request-bytes';

const encode = (eventJson: string) => Buffer.from(responsesV1.SessionRequest.encode({ eventJson }).finish());

describe('decodeSessionRequestBytes', () => {
  it('reads event_json as the UTF-8 bytes a client encoded, undecoded', () => {
    const text = JSON.stringify({ type: 'response.create', input: 'héllo ✓ 𝄞' });
    const { eventJson } = decodeSessionRequestBytes(encode(text));
    expect(Buffer.isBuffer(eventJson)).toBe(true);
    expect(eventJson.equals(Buffer.from(text, 'utf8'))).toBe(true);
    expect(eventJson.toString('utf8')).toBe(responsesV1.SessionRequest.decode(encode(text)).eventJson);
  });

  it('is a view of the message, not a copy', () => {
    const message = encode('{"type":"response.create"}');
    const { eventJson } = decodeSessionRequestBytes(message);
    expect(eventJson.buffer).toBe(message.buffer);
    message[message.length - 3] = 'X'.charCodeAt(0);
    expect(eventJson.toString()).toBe('{"type":"response.creatX"}');
  });

  it('skips fields it does not know, and reads an empty message as an empty event', () => {
    const writer = new BinaryWriter();
    writer.uint32((7 << 3) | 0).uint64(42); // field 7, varint
    writer.uint32((1 << 3) | 2).string('{"a":1}');
    writer.uint32((9 << 3) | 2).string('ignored');
    expect(decodeSessionRequestBytes(Buffer.from(writer.finish())).eventJson.toString()).toBe('{"a":1}');
    expect(decodeSessionRequestBytes(Buffer.alloc(0)).eventJson.length).toBe(0);
  });
});
