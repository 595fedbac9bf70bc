import type { Stack } from '@fastloop/launcher';
import { expectWellFormedStream, useStack, WsConversation } from './clients';
import { readFixture, type FixtureTurn } from './fixtures';
import { postSse } from './http';
import { startTestStack } from './stack-fixture';

// Replays what real clients sent (recorded by codex.e2e.spec.ts with FASTLOOP_RECORD_FIXTURES=1)
// against the real stack, without needing the client itself: fast, and it pins the exact shapes
// those clients put on the wire (developer messages as parts, `client_metadata`, `include`,
// `prompt_cache_key`, custom and namespace tools, `generate: false`, …). The recorded answers'
// response and call ids are mapped to the ones this run gets back; the simulated model is
// deterministic, so each request must end the same way as when it was recorded.
let stack: Stack;

beforeAll(async () => {
  stack = await startTestStack({ SIM_TOOL_CALLS: '2' });
  useStack(stack);
}, 300_000); // two starts (one retry) of up to the readiness budget each

afterAll(async () => {
  useStack(undefined);
  await stack?.stop();
}, 60_000);

/** Recorded ids → the ids this replay got for the same answers. */
class IdMap {
  private readonly ids = new Map<string, string>();

  learn(recorded: FixtureTurn['answer'], live: { id: string; output: { type: string; call_id?: string }[] }): void {
    if (recorded.id) this.ids.set(recorded.id, live.id);
    recorded.output.forEach((o, i) => {
      if (o.call_id && live.output[i]?.call_id) this.ids.set(o.call_id, live.output[i].call_id!);
    });
  }

  /** `value` with every recorded id replaced by its live counterpart. */
  apply<T>(value: T): T {
    return JSON.parse(JSON.stringify(value), (_key, v: unknown) =>
      typeof v === 'string' && this.ids.has(v) ? this.ids.get(v) : v,
    ) as T;
  }
}

/** The answer's shape as the fixture records it: each output item's type, and name for calls. */
function shape(output: { type: string; name?: string }[]) {
  return output.map((o) => (o.name ? { type: o.type, name: o.name } : { type: o.type }));
}

describe('recorded Codex CLI 0.171.0 traffic replayed against the edge', () => {
  it('WebSocket mode: the warm-up and every continuation end as they did for Codex', async () => {
    const turns = readFixture('codex-0.171.0/websocket.jsonl');
    expect(turns.length).toBeGreaterThanOrEqual(3);
    const ids = new IdMap();
    const conv = new WsConversation();
    try {
      for (const turn of turns) {
        conv.ws.sendRaw(JSON.stringify(ids.apply(turn.request)));
        const events = await conv.collect();
        const terminal = expectWellFormedStream(events);
        expect(terminal.type).toBe(turn.answer.type);
        expect(shape(terminal.response.output)).toEqual(shape(turn.answer.output));
        ids.learn(turn.answer, terminal.response);
      }
    } finally {
      conv.close();
    }
  });

  it('HTTP+SSE: every stateless full-history request ends as it did for Codex', async () => {
    const turns = readFixture('codex-0.171.0/http.jsonl');
    expect(turns.length).toBeGreaterThanOrEqual(2);
    const ids = new IdMap();
    for (const turn of turns) {
      const { status, events } = await postSse(stack, ids.apply(turn.request));
      expect(status).toBe(200);
      const terminal = expectWellFormedStream(events);
      expect(terminal.type).toBe(turn.answer.type);
      expect(shape(terminal.response.output)).toEqual(shape(turn.answer.output));
      ids.learn(turn.answer, terminal.response);
    }
  });
});
