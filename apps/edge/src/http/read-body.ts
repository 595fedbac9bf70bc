import type { IncomingMessage } from 'node:http';
import { ApiErrors } from '@fastloop/protocol';

/**
 * Reads a request body up to `limitBytes`. Oversized bodies fail with 413 as soon as the limit is
 * crossed (the rest is not buffered).
 */
export function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
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
      if (size > limitBytes) {
        failed = true;
        chunks.length = 0;
        reject(ApiErrors.payloadTooLarge(limitBytes));
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
