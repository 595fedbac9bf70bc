/**
 * The bytes in a buffer of their own: decoded `bytes` are a view of the whole gRPC receive buffer
 * (8 KB or more), and `Buffer.from` would put small copies in a shared 8 KB pool slab; either one
 * is kept alive for as long as the connection cache keeps the conversation.
 */
export function ownedCopy(bytes: Uint8Array): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  copy.set(bytes);
  return copy;
}
