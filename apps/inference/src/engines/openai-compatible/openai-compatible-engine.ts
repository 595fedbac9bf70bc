import type { Logger } from 'pino';
import { hashString } from '@fastloop/service-kit';
import type { Engine, EngineHealth, EngineRequest } from '../../engine';
import { DIALECT_BY_NAME, type DialectName, type ReadState } from './dialects';
import { sseData } from './sse-events';

/** Options of {@link OpenAiCompatibleEngine} (OPENAI_COMPAT_* configuration). */
export interface OpenAiCompatibleEngineOptions {
  /** Base URL of the upstream server, e.g. `http://gpu-1:8000`. */
  baseUrl: string;
  dialect: DialectName;
  /** Model name the upstream knows (vLLM's `model`). */
  model: string;
  /** llama-server slots (`--parallel`): a session keeps the slot its key hashes to; 0 = server picks. */
  slots: number;
  apiKey?: string;
  logger: Logger;
  fetch?: typeof fetch;
}

/**
 * Streams from vLLM, SGLang or llama-server through their token-id APIs, so nothing is tokenized
 * twice: the prompt goes up as ids and sampled ids come back. Cancelling aborts the upstream
 * request; cached tokens are what the upstream reports. NOT exercised against a real vLLM or
 * SGLang in CI: the unit tests use fakes that follow each server's documented shapes.
 */
export class OpenAiCompatibleEngine implements Engine {
  readonly name = 'openai-compatible' as const;
  readonly simulated = false;
  private readonly fetch: typeof fetch;
  private closed = false;

  constructor(private readonly options: OpenAiCompatibleEngineOptions) {
    this.fetch = options.fetch ?? fetch;
  }

  async *generate(request: EngineRequest): AsyncGenerator<readonly number[]> {
    if (this.closed) throw new Error('openai-compatible engine is closed');
    const dialect = DIALECT_BY_NAME[this.options.dialect];
    const upstream = new AbortController();
    const abort = () => upstream.abort();
    request.signal.addEventListener('abort', abort, { once: true });
    try {
      const response = await this.post(
        dialect.path,
        dialect.body(request, { model: this.options.model, slot: this.slotOf(request.sessionKey) }),
        upstream.signal,
      );
      if (!response) return;
      const state: ReadState = { emitted: 0 };
      let cachedTokens: number | undefined;
      let finished = false;
      for await (const payload of sseData(response.body as unknown as AsyncIterable<Uint8Array>)) {
        if (payload === '[DONE]') {
          finished = true;
          break;
        }
        const step = dialect.read(JSON.parse(payload) as Record<string, unknown>, state);
        cachedTokens = step.cachedTokens ?? cachedTokens;
        if (step.tokens.length > 0) yield step.tokens;
        if (step.finished) {
          finished = true;
          break;
        }
      }
      if (!finished && !request.signal.aborted) throw new Error('upstream stream ended before its final event');
      if (cachedTokens !== undefined)
        request.onPrefill?.({ cachedTokens, evaluatedTokens: request.prompt.length - cachedTokens });
    } catch (err) {
      if (request.signal.aborted) return;
      throw err;
    } finally {
      request.signal.removeEventListener('abort', abort);
      // Leaving early (caller cancelled or stopped reading) must stop the upstream's generation.
      upstream.abort();
    }
  }

  private async post(path: string, body: Record<string, unknown>, signal: AbortSignal): Promise<Response | undefined> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    let response: Response;
    try {
      response = await this.fetch(new URL(path, this.options.baseUrl), {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal,
      });
    } catch (err) {
      if (signal.aborted) return undefined;
      throw new Error(`upstream ${this.options.dialect} unreachable: ${(err as Error).message}`, { cause: err });
    }
    if (!response.ok || !response.body) {
      const text = (await response.text().catch(() => '')).slice(0, 500);
      throw new Error(`upstream ${this.options.dialect} answered HTTP ${response.status}: ${text}`);
    }
    return response;
  }

  /** vLLM, SGLang and llama-server all answer `GET /health` with 200 once the model is loaded. */
  get upstream(): string {
    return this.options.baseUrl;
  }

  async checkHealth(signal: AbortSignal): Promise<EngineHealth> {
    try {
      const res = await this.fetch(new URL('/health', this.options.baseUrl), { signal });
      await res.body?.cancel();
      return res.ok ? { healthy: true } : { healthy: false, reason: `GET /health answered ${res.status}` };
    } catch (err) {
      // fetch() says only "fetch failed"; the cause has the errno (ECONNREFUSED, ENOTFOUND, …).
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      return { healthy: false, reason: cause?.code ?? cause?.message ?? (err as Error).message };
    }
  }

  /** The llama-server slot a session keeps, so its KV stays in one slot across turns. */
  private slotOf(sessionKey: string | undefined): number | undefined {
    if (this.options.slots <= 0 || !sessionKey) return undefined;
    return hashString(sessionKey) % this.options.slots;
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
