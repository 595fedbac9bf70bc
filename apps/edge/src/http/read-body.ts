import type { IncomingMessage } from 'node:http';
import { ApiErrors, type ApiError } from '@fastloop/protocol';

/**
 * Reads a request body up to `limitBytes`. Oversized bodies fail with 413 as soon as the limit is
 * crossed (the rest is not buffered). `reserve` takes each chunk's bytes from the process's bound on
 * bytes held (session/queued-bytes.ts); the error it returns fails the read at once.
 */
export function readBody(
  req: IncomingMessage,
  limitBytes: number,
  reserve: (bytes: number) => ApiError | undefined = () => undefined,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limitBytes) {
      req.resume();
      return reject(ApiErrors.payloadTooLarge(limitBytes));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      const refused = size > limitBytes ? ApiErrors.payloadTooLarge(limitBytes) : reserve(chunk.length);
      if (refused) {
        failed = true;
        chunks.length = 0;
        reject(refused);
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', (err) => {
      if (!failed) reject(err);
      failed = true;
    });
    req.on('end', () => {
      if (failed) return;
      resolve(Buffer.concat(chunks, size));
    });
  });
}

/** Parses a body as JSON; anything else is `invalid_json`. */
export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw ApiErrors.invalidJson();
  }
}
