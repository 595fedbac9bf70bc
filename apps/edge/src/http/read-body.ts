import type { IncomingMessage } from 'node:http';
import { ApiErrors } from '@fastloop/protocol';

/**
 * Reads a request body up to `limitBytes` and parses it as JSON. Oversized bodies fail with 413
 * as soon as the limit is crossed (the rest is not buffered); non-JSON with `invalid_json`.
 */
export function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
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
      try {
        resolve(JSON.parse(Buffer.concat(chunks, size).toString('utf8')));
      } catch {
        reject(ApiErrors.invalidJson());
      }
    });
  });
}
