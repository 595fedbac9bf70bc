import OpenAI from 'openai-v7';
import { ResponsesWS } from 'openai-v7/resources/responses/ws';
import type { ResponsesServerEvent } from 'openai-v7/resources/responses/responses';
import { stackEnv } from './clients';
import { stackForThisFile } from './file-stack';
import { weatherTool } from './stack-fixture';

// openai-node 7.x's ResponsesWS (the version OpenAI's websocket-mode guide asks for: ≥ 7.10, here
// as the `openai-v7` alias beside the suite's 6.x) drives lanes (`stream_id`), forks across lanes,
// `response.interrupt` and the errors that leave the socket open.
const MODEL = 'fastloop-sim';
// Answers of ≈ 400 tokens at 500 tokens/s: still streaming when an interrupt or a steer arrives.
const stack = stackForThisFile({ SIM_TOOL_CALLS: '1', SIM_ANSWER_WORDS: '300', SIM_TOKENS_PER_SECOND: '500' });

type Event = ResponsesServerEvent & { stream_id?: string; response?: any; error?: any };
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

/** One socket shared by several lanes: each lane waits for its own events. */
class LaneSocket {
  readonly ws: ResponsesWS;
  readonly all: Event[] = [];
  private readonly listeners = new Set<(e: Event) => void>();

  constructor() {
    stack();
    const { url, key } = stackEnv();
    this.ws = new ResponsesWS(new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 }));
    this.ws.on('event', (e) => this.push(e as Event));
    this.ws.on('error', (err) => {
      if (err.error) this.push(err.error as Event);
    });
  }

  private push(e: Event): void {
    this.all.push(e);
    for (const l of this.listeners) l(e);
  }

  /** Resolves with `lane`'s events up to its next terminal event (or error) that `until` accepts. */
  collect(lane: string | undefined, until: (e: Event) => boolean = (e) => TERMINAL.has(e.type)): Promise<Event[]> {
    const mine: Event[] = [];
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`lane ${lane} timed out`)), 30_000);
      const listener = (e: Event) => {
        if (e.stream_id !== lane) return;
        mine.push(e);
        if (!until(e)) return;
        clearTimeout(timer);
        this.listeners.delete(listener);
        resolve(mine);
      };
      this.listeners.add(listener);
    });
  }

  create(lane: string | undefined, body: Record<string, unknown>): Promise<Event[]> {
    const done = this.collect(lane);
    this.ws.send({ type: 'response.create', model: MODEL, store: false, stream_id: lane, ...body } as never);
    return done;
  }

  close(): void {
    this.ws.close({ code: 1000, reason: 'done' });
  }
}

/** One sub-agent: a tool loop on its own lane, to its final answer. */
async function agent(socket: LaneSocket, lane: string, task: string): Promise<Event[]> {
  const all: Event[] = [];
  let events = await socket.create(lane, { input: task, tools: [weatherTool] });
  for (;;) {
    all.push(...events);
    const r = events[events.length - 1].response;
    expect(events[events.length - 1].type).toBe('response.completed');
    const call = r.output.find((i: any) => i.type === 'function_call');
    if (!call) return all;
    events = await socket.create(lane, {
      previous_response_id: r.id,
      tools: [weatherTool],
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temp_c": 18}' }],
    });
  }
}

describe('lanes with openai-node 7 ResponsesWS', () => {
  let socket: LaneSocket;
  beforeEach(() => {
    socket = new LaneSocket();
  });
  afterEach(() => socket.close());

  it('runs three sub-agents in parallel on one socket, each lane FIFO, every event echoing its stream_id', async () => {
    const lanes = ['agent-a', 'agent-b', 'agent.c'];
    const results = await Promise.all(lanes.map((lane, i) => agent(socket, lane, `Weather in city ${i}?`)));
    for (const [i, events] of results.entries()) {
      expect(events.every((e) => e.stream_id === lanes[i])).toBe(true);
      const terminals = events.filter((e) => e.type === 'response.completed');
      expect(terminals.map((e) => e.response.output.at(-1).type)).toEqual(['function_call', 'message']);
      expect(terminals[1].response.previous_response_id).toBe(terminals[0].response.id);
    }
    // The lanes overlapped on the one socket: some lane's response started before another's ended.
    const order = socket.all.filter((e) => e.type === 'response.created' || e.type === 'response.completed');
    const firstEnd = order.findIndex((e) => e.type === 'response.completed');
    expect(order.slice(0, firstEnd).filter((e) => e.type === 'response.created').length).toBeGreaterThan(1);
  }, 60_000);

  it('forks a new lane from another lane’s response by previous_response_id', async () => {
    const [first] = (await socket.create('main', { input: 'Weather in Oslo?', tools: [weatherTool] })).slice(-1);
    const call = first.response.output.find((i: any) => i.type === 'function_call');
    const output = { type: 'function_call_output', call_id: call.call_id, output: '{"temp_c": 3}' };
    const [fork, main] = await Promise.all([
      socket.create('fork', { previous_response_id: first.response.id, input: [output], tools: [weatherTool] }),
      socket.create('main', { previous_response_id: first.response.id, input: [output], tools: [weatherTool] }),
    ]);
    for (const events of [fork, main]) {
      const last = events[events.length - 1];
      expect(last).toMatchObject({ type: 'response.completed', response: { previous_response_id: first.response.id } });
      // Served from the connection's state: the worker held the parent's prompt.
      expect(last.response.usage.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    }
  }, 60_000);

  it('interrupts a running response (Codex’s discard_partial_items): incomplete/interrupted, then the next turn runs', async () => {
    const done = socket.collect(undefined);
    socket.ws.send({ type: 'response.create', model: MODEL, store: false, input: 'Tell me a long story.' } as never);
    const [firstDelta] = await socket.collect(undefined, (e) => e.type === 'response.output_text.delta');
    void firstDelta;
    const id = socket.all.find((e) => e.type === 'response.created')!.response.id;
    socket.ws.sendRaw(JSON.stringify({ type: 'response.interrupt', response_id: id, mode: 'discard_partial_items' }));
    const events = await done;
    const last = events[events.length - 1];
    expect(last.type).toBe('response.incomplete');
    expect(last.response.incomplete_details).toEqual({ reason: 'interrupted' });
    expect(last.response.output).toEqual([]); // the answer being written was discarded
    // Sampling stopped early: far fewer tokens than the 300-word answer.
    expect(last.response.usage.output_tokens).toBeLessThan(300);
    const next = await socket.create(undefined, { previous_response_id: id, input: 'Shorter, please.' });
    expect(next[next.length - 1]).toMatchObject({ type: 'response.completed', response: { previous_response_id: id } });
  }, 60_000);

  it('steers a running response with the SDK’s response.steer: accepted, ended as steered, an automatic successor completes', async () => {
    // Steered once it streams (steering before the first token stops at once; the unit tests cover that).
    const created = socket.collect('steer', (e) => e.type === 'response.output_text.delta');
    socket.ws.send({
      type: 'response.create',
      model: MODEL,
      store: false,
      stream_id: 'steer',
      input: 'Tell me a long story.',
    } as never);
    const id = (await created).find((e) => e.type === 'response.created')!.response.id;
    const rest = socket.collect('steer', (e) => e.type === 'response.completed' || e.type === 'response.steer.failed');
    socket.ws.send({ type: 'response.steer', previous_response_id: id, input: 'Make it about a cat.' });
    const events = await rest;
    const types = events.map((e) => e.type);
    expect(types).toContain('response.steer.accepted');
    const steered = events.find((e) => e.type === 'response.incomplete')!;
    expect(steered.response.incomplete_details).toEqual({ reason: 'steered' });
    const successor = events.at(-1)!;
    expect(successor).toMatchObject({ type: 'response.completed', response: { previous_response_id: id } });
    // The worker kept the steered call's session (cancelled with keep): the successor's prompt up to
    // the steered input is cached, not prefilled again.
    expect(successor.response.usage.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(
      steered.response.usage.input_tokens,
    );
  }, 60_000);

  it('answers a malformed stream_id and an unimplemented event with errors naming them, and keeps the socket', async () => {
    const bad = socket.collect(undefined);
    socket.ws.sendRaw(JSON.stringify({ type: 'response.create', model: MODEL, stream_id: 'has space', input: 'x' }));
    expect((await bad)[0].error).toMatchObject({ code: 'invalid_stream_id', param: 'stream_id' });
    const unknown = socket.collect(undefined);
    socket.ws.sendRaw(JSON.stringify({ type: 'response.inject', input: 'x' }));
    expect((await unknown)[0].error.message).toContain("'response.inject'");
    socket.ws.sendRaw(JSON.stringify({ type: 'response.processed', response_id: 'resp_x' }));
    const ok = await socket.create('after', { input: 'Weather in Lima?', tools: [weatherTool] });
    expect(ok[ok.length - 1].type).toBe('response.completed');
  }, 60_000);
});
