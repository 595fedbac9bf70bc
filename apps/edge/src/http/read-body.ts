import type { IncomingMessage } from 'node:http';
import { ApiErrors, type ApiError } from '@fastloop/protocol';
import type { LargeBodyGate } from '../turn/large-body-gate';

/**
 * Reads a request body up to `limitBytes`. Oversized bodies fail with 413 as soon as the limit is
 * crossed (the rest is not buffered). `reserve` takes the body's bytes from the process's bound on
 * bytes held (session/queued-bytes.ts): a large body's declared length at once, else each chunk's;
 * the error it returns fails the read at once.
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
    // A body that says its length is copied into place chunk by chunk: one copy of a 24 MB body at
    // its end held the event loop ~80 ms on these machines (fresh pages fault slowly), every other
    // tenant waiting (issue 17). Its bytes are reserved up front, so the bound on bytes held also
    // bounds what is set aside for bodies still arriving (2,000 slow clients declaring 32 MB each).
    let into: Buffer | undefined;
    if (Number.isFinite(declared) && declared >= PREALLOCATE_FROM) {
      const refused = reserve(declared);
      if (refused) {
        req.resume();
        return reject(refused);
      }
      into = Buffer.allocUnsafe(declared);
    }
    const reserved = into?.length ?? 0;
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      const beyond = Math.min(chunk.length, Math.max(0, size - reserved));
      const refused =
        size > limitBytes ? ApiErrors.payloadTooLarge(limitBytes) : beyond > 0 ? reserve(beyond) : undefined;
      if (refused) {
        failed = true;
        chunks.length = 0;
        into = undefined;
        reject(refused);
        return;
      }
      if (into && size <= into.length) return void chunk.copy(into, size - chunk.length);
      // More than it declared (Node's parser does not let that happen): read as it comes.
      if (into) chunks.push(into.subarray(0, size - chunk.length));
      into = undefined;
      chunks.push(chunk);
    });
    req.on('error', (err) => {
      if (!failed) reject(err);
      failed = true;
    });
    req.on('end', () => {
      if (failed) return;
      resolve(into ? into.subarray(0, size) : Buffer.concat(chunks, size));
    });
  });
}

/** Bodies from this many bytes (declared) are read into one buffer as they arrive. */
const PREALLOCATE_FROM = 64 * 1024;

/**
 * Parses a body as JSON; anything else is `invalid_json`. A large body is decoded first, as a stage
 * of its own (a turn of the event loop between: 24 MB took ~80 ms to decode and ~90 to parse here).
 */
export function parseJson(body: Buffer | string): unknown {
  try {
    return JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    throw ApiErrors.invalidJson();
  }
}

/**
 * A body's JSON: parsed on a thread when large and the gate has a parser (its time counted in
 * `spent`, the waits for the tenant's pace and a thread included), else here; a large one decoded
 * first, as a stage of its own.
 */
export async function parseBody(
  gate: LargeBodyGate | undefined,
  tenant: string,
  bytes: Buffer,
  stage: <T>(work: () => T) => Promise<T>,
  spent: (ms: number) => void,
): Promise<unknown> {
  const start = performance.now();
  const offThread = gate?.parse(tenant, bytes);
  if (offThread) {
    const parsed = await offThread.finally(() => spent(performance.now() - start));
    if (!parsed.ok) throw ApiErrors.invalidJson();
    return parsed.value;
  }
  const text = gate?.isLarge(bytes.length) ? await stage(() => bytes.toString('utf8')) : bytes;
  return stage(() => parseJson(text));
}
