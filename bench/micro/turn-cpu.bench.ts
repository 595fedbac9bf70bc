/**
 * The edge's own CPU per continuation turn, in process: the session core (parse, validation,
 * input, verdict, route, render, generate, events as JSON text, continuation state) against the
 * in-process fake backends (apps/edge/src/testing/fake-deps.ts), with bench/agent-loop's ten tools
 * and ~9.4 KB instructions resent every turn and a 2–6 KB tool output per turn. No sockets and no
 * other process, so two builds compare on a loaded machine where bench/load cannot tell them apart.
 *
 *   npx tsx bench/micro/turn-cpu.bench.ts [--conversations N] [--turns N]   (default 6 × 40)
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AGENT_TOOLS } from '../agent-loop/agent-tools';
import { buildInstructions } from '../agent-loop/instructions';
import { getProfile } from '@fastloop/model-profiles';
import { inferenceV1 } from '@fastloop/proto';
// eslint-disable-next-line @nx/enforce-module-boundaries -- measures the edge's internals in process; an app has no public entry
import { fakeDeps } from '../../apps/edge/src/testing/fake-deps';
// eslint-disable-next-line @nx/enforce-module-boundaries -- measures the edge's internals in process; an app has no public entry
import { eventJson } from '../../apps/edge/src/session/event-json';
// eslint-disable-next-line @nx/enforce-module-boundaries -- measures the edge's internals in process; an app has no public entry
import { ResponsesSession } from '../../apps/edge/src/session/responses-session';
// eslint-disable-next-line @nx/enforce-module-boundaries -- measures the edge's internals in process; an app has no public entry
import { ConnectionStateCache, StateCacheBudget } from '../../apps/edge/src/session/state-cache';

const REPO = resolve(__dirname, '..', '..');
const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};

/** Tool outputs: slices of the edge's own source, 2–6 KB. */
function outputs(): string[] {
  const text = readFileSync(join(REPO, 'apps/edge/src/turn/render-conversation.ts'), 'utf8');
  return Array.from({ length: 16 }, (_, i) =>
    text.slice((i * 397) % 2000, ((i * 397) % 2000) + 2000 + ((i * 251) % 4000)),
  );
}

const profile = getProfile('harmony-o200k');

/**
 * A worker that answers every call with a `read_file` call and keeps only its sessions' lengths:
 * the test fake keeps whole prompts for its assertions, O(history) a turn, which would be most of
 * the figure at turn 40.
 */
async function* leanGenerate(
  lengths: Map<string, number>,
  req: inferenceV1.GenerateRequest,
): AsyncGenerator<inferenceV1.GenerateResponse> {
  const held = lengths.get(req.parentSessionKey || req.sessionKey) ?? 0;
  const promptTokens = req.prefixLen + req.tokens.length;
  const args = JSON.stringify({ path: `src/f${lengths.size}.ts` });
  const completion = profile.renderCompletion({
    kind: 'function_call',
    name: 'read_file',
    arguments: args,
    callId: '',
  });
  lengths.set(req.sessionKey, promptTokens + completion.length);
  const cachedTokens = Math.min(held, req.prefixLen);
  for (let i = 0; i < completion.length; i += 8) {
    await Promise.resolve();
    const first = i === 0;
    const value = {
      tokens: completion.slice(i, i + 8),
      engineElapsedMs: i + 1,
      promptTokens: first ? promptTokens : 0,
      cachedTokens: first ? cachedTokens : 0,
    };
    yield { event: { $case: 'chunk', value } };
  }
  const done = { promptTokens, cachedTokens, completionTokens: completion.length, engineTtftMs: 0 };
  yield { event: { $case: 'done', value: { finishReason: inferenceV1.FinishReason.FINISH_REASON_STOP, ...done } } };
}

async function conversation(turns: number, seed: number, serialize: (e: object) => string): Promise<number> {
  const { deps } = fakeDeps();
  const lengths = new Map<string, number>();
  (deps.backends as { generate: unknown }).generate = (_address: string, req: inferenceV1.GenerateRequest) =>
    leanGenerate(lengths, req);
  let last: any;
  const session = new ResponsesSession({
    deps,
    principal: { tenant: 't', keyId: 'k' },
    transport: 'websocket',
    cache: new ConnectionStateCache(new StateCacheBudget(1 << 30), 1 << 28),
    send: (e) => {
      serialize(e);
      last = e;
    },
    logger: deps.logger,
    maxQueued: 4,
  });
  const header = { model: 'fake-model', store: false, instructions: buildInstructions(seed), tools: AGENT_TOOLS };
  const send = async (body: object) => {
    session.receive(JSON.stringify({ type: 'response.create', ...header, ...body }));
    await session.whenIdle();
    return last.response;
  };
  let r = await send({ input: 'Find where the conversation is rendered.' });
  const texts = outputs();
  let cpu = 0;
  for (let t = 0; t < turns; t++) {
    const call = r.output.at(-1);
    const start = process.cpuUsage();
    r = await send({
      previous_response_id: r.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: texts[t % texts.length] }],
    });
    const used = process.cpuUsage(start);
    cpu += (used.user + used.system) / 1000;
  }
  return cpu / turns;
}

async function main(): Promise<void> {
  const conversations = arg('conversations', 6);
  const turns = arg('turns', 40);
  // What the transports write: each event as JSON text.
  const serialize = eventJson;
  await conversation(10, 0, serialize); // warm-up
  const perTurn: number[] = [];
  for (let c = 1; c <= conversations; c++) perTurn.push(await conversation(turns, c, serialize));
  perTurn.sort((a, b) => a - b);
  const median = perTurn[Math.floor(perTurn.length / 2)];
  process.stdout.write(
    `edge CPU per continuation turn (in process, fake backends): median ${median.toFixed(3)} ms over ${conversations} conversations × ${turns} turns (min ${perTurn[0].toFixed(3)}, max ${perTurn.at(-1)!.toFixed(3)})\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`turn-cpu bench failed: ${String(err)}\n`);
  process.exit(1);
});
