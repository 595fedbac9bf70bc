/**
 * What a hostile tenant does to a running stack, one class each (issue 17), as small primitives
 * over HTTP and WebSocket: used by bench/fairness (the neighbour measured beside each) and by
 * e2e/src/fairness.e2e.spec.ts (each attack shown failing while the neighbour is served).
 */
import WebSocket from 'ws';

/** Where to send, and as whom. */
export interface Target {
  /** The edge's HTTP base, `http://127.0.0.1:<port>`. */
  url: string;
  wsUrl: string;
  apiKey: string;
}

export const MODEL = 'fastloop-sim';
const MB = 1 << 20;

/** A deterministic generator, so runs send the same text. */
function lcg(seed: number): () => number {
  let x = seed;
  return () => (x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff);
}

/**
 * `bytes` of fake AWS access key ids, one a line: each one a secret finding. Built at run time (no
 * source file holds one); the bodies are random base32, never real keys.
 */
export function keyWall(bytes: number, seed = 1): string {
  const next = lcg(seed);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const lines: string[] = [];
  for (let size = 0; size < bytes; size += 21) {
    let body = '';
    for (let i = 0; i < 16; i++) body += alphabet[next() % 32];
    lines.push(`AK${'IA'}${body}`);
  }
  return lines.join('\n');
}

/** The request shapes that once stalled the edge's event loop for seconds (issue 17, CPU). */
export function cpuShapes(): Record<string, string> {
  const next = lcg(7);
  let word = '';
  for (let i = 0; i < MB; i++) word += String.fromCharCode(97 + (next() % 26));
  let cjk = '';
  for (let i = 0; i < MB / 3; i++) cjk += String.fromCharCode(0x4e00 + (next() % 20_000));
  return {
    '4 MB of spaces': ' '.repeat(4 * MB),
    '8 MB of =': '='.repeat(8 * MB),
    '1 MB random word': word,
    '1 MB CJK': cjk,
    '1 MB emoji': '🦀'.repeat(MB / 4),
  };
}

/** An answer: its HTTP status, error code when it failed, and how long it took. */
export interface Outcome {
  status: number;
  code?: string;
  ms: number;
}

/** POST /v1/responses (not streamed) and read the whole answer. */
export async function postResponse(
  target: Target,
  body: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Outcome> {
  const t0 = performance.now();
  try {
    const res = await fetch(`${target.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, store: false, ...body }),
      signal,
    });
    const json = (await res.json()) as { error?: { code?: string } };
    return { status: res.status, code: json.error?.code, ms: performance.now() - t0 };
  } catch (err) {
    return { status: 0, code: (err as Error).name, ms: performance.now() - t0 };
  }
}

/** A neighbour's small turn: a short question, a short answer. */
export function smallTurn(target: Target): Promise<Outcome> {
  return postResponse(target, { input: 'Say hi.', max_output_tokens: 16 });
}

/**
 * A streamed response held open: resolves once its first output delta arrived (it holds a
 * generation slot), with `close()` to hang up and `ended` for how it finished.
 */
export async function openStream(
  target: Target,
  body: Record<string, unknown>,
): Promise<{ started: boolean; status: number; close(): void; ended: Promise<void> }> {
  const abort = new AbortController();
  const res = await fetch(`${target.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, store: false, stream: true, ...body }),
    signal: abort.signal,
  }).catch(() => undefined);
  if (!res || res.status !== 200 || !res.body)
    return { started: false, status: res?.status ?? 0, close: () => abort.abort(), ended: Promise.resolve() };
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let started = false;
  while (!started) {
    const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
    if (chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
    started = /event: response\.(output_text|reasoning_text|function_call_arguments)\.delta/.test(text);
    if (/event: response\.failed/.test(text)) break;
  }
  const ended = (async () => {
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (chunk.done) return;
    }
  })();
  return { started, status: res.status, close: () => abort.abort(), ended };
}

/**
 * A WebSocket that queues `frames` response.create events of `bytes` each (the memory flood);
 * `errors` collects the codes of the error events the edge answers (e.g. `too_many_queued_bytes`).
 */
export async function queueBigFrames(
  target: Target,
  frames: number,
  bytes: number,
): Promise<{ close(): void; errors: string[] }> {
  const ws = new WebSocket(target.wsUrl, {
    headers: { authorization: `Bearer ${target.apiKey}` },
    perMessageDeflate: false,
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const errors: string[] = [];
  ws.on('error', () => undefined);
  ws.on('message', (data) => {
    const event = JSON.parse(String(data)) as { type?: string; error?: { code?: string } };
    if (event.type === 'error') errors.push(event.error?.code ?? 'error');
  });
  const input = 'x'.repeat(bytes);
  for (let i = 0; i < frames; i++)
    ws.send(JSON.stringify({ type: 'response.create', model: MODEL, store: false, input, max_output_tokens: 16 }));
  return { close: () => ws.terminate(), errors };
}

/** POST /v1/responses with a body that is not JSON: the edge alone answers it (400 `invalid_json`). */
export async function badJson(target: Target): Promise<Outcome> {
  const t0 = performance.now();
  const res = await fetch(`${target.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' },
    body: '{"model": ',
  });
  const json = (await res.json()) as { error?: { code?: string } };
  return { status: res.status, code: json.error?.code, ms: performance.now() - t0 };
}
