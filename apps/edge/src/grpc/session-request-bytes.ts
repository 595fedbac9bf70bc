import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';

/** A `SessionRequest` as the edge reads it: `event_json` as the bytes received, not yet text. */
export interface SessionRequestBytes {
  readonly eventJson: Buffer;
}

const NONE: Buffer = Buffer.alloc(0);

/**
 * The Session call's request deserializer. A proto3 `string` is a length-delimited field, as
 * `bytes` is, so `event_json` is read as a view of the message, without decoding it: the session
 * decodes an event only once its bytes are held against the queued-bytes bounds, so an event over
 * them is refused without the cost of decoding it (as a WebSocket frame is). Wire-compatible with
 * every client: the message type is unchanged.
 */
export function decodeSessionRequestBytes(message: Buffer): SessionRequestBytes {
  const reader = new BinaryReader(message);
  let eventJson: Buffer = NONE;
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === WireType.LengthDelimited) {
      const view = reader.bytes();
      eventJson = Buffer.from(view.buffer, view.byteOffset, view.byteLength);
    } else reader.skip(wireType, field);
  }
  return { eventJson };
}
