import WebSocket from 'ws';
import { startStack, type Stack } from '@fastloop/launcher';
import { MetricsScrape } from './metrics';
import { serviceEntries } from './service-entries';

const API_KEY = 'sk-e2e-moderation';

interface Event {
  type: string;
  delta?: string;
  response?: { status: string; output: { type: string; content?: { text?: string }[] }[] };
  error?: { code?: string };
}

/** One WebSocket connection; `turn` sends a response.create and collects its events to the terminal one. */
class Socket {
  private readonly events: Event[] = [];
  private wake: (() => void) | undefined;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.events.push(JSON.parse(data.toString()) as Event);
      this.wake?.();
    });
  }

  static async open(stack: Stack): Promise<Socket> {
    const ws = new WebSocket(stack.wsUrl, { headers: { authorization: `Bearer ${API_KEY}` } });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new Socket(ws);
  }

  send(input: string): void {
    this.events.length = 0;
    this.ws.send(JSON.stringify({ type: 'response.create', model: 'fastloop-sim', input, store: false }));
  }

  /** Waits for an event matching `done`, within `timeoutMs`; returns every event so far. */
  async until(done: (e: Event) => boolean, timeoutMs = 30_000): Promise<Event[]> {
    const deadline = Date.now() + timeoutMs;
    while (!this.events.some(done)) {
      if (Date.now() > deadline) throw new Error(`timed out; events: ${this.events.map((e) => e.type).join(',')}`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 200);
      });
    }
    return [...this.events];
  }
}

const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete', 'error']);

async function waitReady(stack: Stack, service: 'safety'): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${stack.services[service].ports.admin}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${service} did not come back`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('output moderation when safety restarts mid-answer', () => {
  let stack: Stack | undefined;
  beforeAll(async () => {
    stack = await startStack({
      entries: serviceEntries(),
      port: 0,
      privateRedis: !process.env.REDIS_URL,
      logLevel: 'warn',
      restart: { initialBackoffMs: 200 },
      env: {
        FASTLOOP_API_KEYS: `${API_KEY}:moderation-tenant`,
        SIM_TTFT_MS: '5',
        SIM_TOOL_CALLS: '0',
        // A slow, long answer: safety is killed while it streams.
        SIM_TOKENS_PER_SECOND: '150',
        SIM_ANSWER_WORDS: '400',
        EDGE_OUTPUT_MODERATION: 'true',
      },
    });
  }, 300_000);
  afterAll(async () => {
    if (stack) process.stderr.write(`e2e stack logs: ${stack.logDir}\n`);
    await stack?.stop();
  }, 60_000);

  it('the answer fails closed or finishes judged, never shows unjudged text, and the next answer is moderated again', async () => {
    const s = await Socket.open(stack!);
    try {
      s.send('Tell me a long story.');
      await s.until((e) => e.type === 'response.output_text.delta');
      process.kill(stack!.services.safety.pid, 'SIGKILL');
      const events = await s.until((e) => TERMINAL.has(e.type), 60_000);
      const end = events.find((e) => TERMINAL.has(e.type))!;
      const shown = events
        .filter((e) => e.type === 'response.output_text.delta')
        .map((e) => e.delta)
        .join('');
      const after = events.slice(events.indexOf(end) + 1);
      expect(after.filter((e) => e.type === 'response.output_text.delta')).toEqual([]);
      if (end.type === 'response.completed') {
        // Re-established: every character was judged (the retry went to the restarted service) and shown once.
        const text = end
          .response!.output.flatMap((o) => o.content ?? [])
          .map((c) => c.text)
          .join('');
        expect(shown).toBe(text);
      } else {
        // Failed closed: the response says safety failed; what was shown had been judged before the kill.
        expect(end.type).toBe('response.failed');
        expect(JSON.stringify(end)).toMatch(/safety|unavailable/i);
        expect(shown.length).toBeGreaterThan(0);
      }

      process.stderr.write(`safety killed mid-answer: the answer ended ${end.type} after ${shown.length} characters\n`);

      // Once safety is back (and the edge's channel has reconnected: until then answers fail closed,
      // naming safety), answers are moderated again on the same connection.
      await waitReady(stack!, 'safety');
      const deadline = Date.now() + 60_000;
      for (;;) {
        s.send('And another one.');
        const next = await s.until((e) => TERMINAL.has(e.type), 60_000);
        const last = next.find((e) => TERMINAL.has(e.type))!;
        if (last.type === 'response.completed') {
          expect(next.some((e) => e.type === 'response.output_text.delta')).toBe(true);
          // Judged on a ModerateStream session of the restarted service (no state per batch).
          expect((await MetricsScrape.of(stack!, 'safety')).value('safety_moderation_sessions_total')).toBeGreaterThan(
            0,
          );
          break;
        }
        expect(JSON.stringify(last)).toMatch(/safety/i);
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((r) => setTimeout(r, 500));
      }
    } finally {
      s.ws.close();
    }
  }, 180_000);
});
