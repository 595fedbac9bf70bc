import type { Stack } from '@fastloop/launcher';
import { codexHome, removeTempDirs, runCodex, tempGitRepo, type CodexRun } from './codex-cli';
import { RecordingProxy, type RecordedTurn } from './recording-proxy';
import { startTestStack } from './stack-fixture';

// Codex CLI 0.171 with its websockets-v2 feature on, in a session that crosses its auto-compaction
// threshold (`model_auto_compact_token_limit`). Three commands print ~3.5k tokens each; the second's
// output passes the limit. Codex picks the compaction path by the provider's name: named `OpenAI`
// (or `azure`) it compacts remotely, sending `compaction_trigger` on its socket (fastloop's
// compaction stage answers with a sealed compaction item and Codex goes on from that window);
// otherwise it compacts locally, asking the model for a handoff summary in a turn of its own. Either
// way the simulated model writes the summary from the conversation (apps/inference/src/engines/sim/
// sim-handoff.ts) and, reading it in the fresh context, runs the step that was left.
const MODEL = 'fastloop-sim';
const KEY = 'sk-e2e-codex-compaction';
const COMMANDS = ['seq 1 1500', 'seq 1501 3000', 'seq 3001 4500'];
const PROMPT = `Run ${COMMANDS.map((c) => `\`${c}\``).join(' then ')} with exec_command.`;
const LIMIT = 9000;

let stack: Stack;
let proxy: RecordingProxy;

beforeAll(async () => {
  stack = await startTestStack({ FASTLOOP_API_KEYS: `${KEY}:codex-compaction`, SIM_TOOL_CALLS: '4' });
  proxy = await RecordingProxy.start(stack.url);
}, 300_000);

afterAll(async () => {
  removeTempDirs();
  await proxy?.close();
  await stack?.stop();
}, 60_000);

/** A CODEX_HOME on WebSocket mode v2 with a low auto-compaction limit; `providerName` picks the path. */
function home(providerName: string): string {
  return codexHome(proxy.url, MODEL, true, {
    providerName,
    topLevel: [`model_auto_compact_token_limit = ${LIMIT}`],
    tables: ['[features]', 'responses_websockets_v2 = true'],
  });
}

function expectCleanRun(run: CodexRun): void {
  if (run.code === 0 && !run.events.some((e) => e.type === 'turn.failed')) return;
  const events = run.events.map((e) => JSON.stringify(e)).join('\n');
  throw new Error(`codex exit ${run.code}\nstderr:\n${run.stderr}\nevents:\n${events}`);
}

/** The commands the model asked Codex to run (its exec_command calls), in order. */
const commandsOf = (turns: RecordedTurn[]) =>
  turns.flatMap((t) =>
    (t.terminal?.response?.output ?? [])
      .filter((o: any) => o.type === 'function_call' && o.name === 'exec_command')
      .map((o: any) => JSON.parse(o.arguments).cmd as string),
  );
const outputTypes = (t: RecordedTurn) => (t.terminal?.response?.output ?? []).map((o: any) => o.type);
const sampled = (turns: RecordedTurn[]) => turns.filter((t) => t.request.generate !== false);

describe('Codex CLI (websockets v2) in a session that crosses its compaction threshold', () => {
  it('compacts remotely through fastloop (compaction_trigger), carries on from the summary, and resumes', async () => {
    const repo = tempGitRepo();
    const codexHomeDir = home('OpenAI');
    const from = proxy.recording.turns.length;
    const upgrades = proxy.recording.upgrades.length;
    const run = await runCodex({ home: codexHomeDir, cwd: repo, prompt: PROMPT, apiKey: KEY, timeoutMs: 90_000 });
    expectCleanRun(run);
    const turns = proxy.turnsSince(from);
    expect(turns.every((t) => t.transport === 'websocket' && t.terminal?.type === 'response.completed')).toBe(true);
    expect(proxy.recording.upgrades.length).toBe(upgrades + 1); // one socket for the whole session

    // Codex asked for compaction on its socket, chained to the response that passed the limit.
    const at = turns.findIndex((t) => t.request.input?.at(-1)?.type === 'compaction_trigger');
    expect(at).toBeGreaterThan(0);
    const trigger = turns[at];
    expect(trigger.request.previous_response_id).toBe(turns[at - 1].terminal!.response.id);
    expect(turns[at - 1].terminal!.response.usage.total_tokens).toBeLessThan(LIMIT);
    const [item] = trigger.terminal!.response.output;
    expect(trigger.terminal!.response.output).toHaveLength(1);
    expect(item).toMatchObject({ type: 'compaction', id: expect.stringMatching(/^cmp_/) });
    expect(item.encrypted_content).toMatch(/^fl1\./);

    // The next request starts a new chain from the compacted window, which fastloop reads: the model
    // runs the step that was left (not the whole task again) on a much smaller context.
    const next = turns[at + 1];
    expect(next.request.previous_response_id).toBeUndefined();
    expect(next.request.input).toContainEqual(expect.objectContaining({ type: 'compaction', id: item.id }));
    expect(next.terminal!.response.usage.input_tokens).toBeLessThan(
      turns[at - 1].terminal!.response.usage.input_tokens,
    );
    expect(commandsOf(turns.slice(0, at))).toEqual(COMMANDS.slice(0, 2));
    expect(commandsOf(turns.slice(at + 1))).toEqual(COMMANDS.slice(2));
    expect(outputTypes(turns[turns.length - 1])).toEqual(['message']);
    expect(run.lastMessage).toMatch(/^Simulated answer after calling exec_command for your request:/);

    // A next turn, in a new Codex process, on the compacted history: it completes.
    const before = proxy.recording.turns.length;
    const resumed = await runCodex({
      home: codexHomeDir,
      cwd: repo,
      prompt: 'Now run `git status --short` with exec_command.',
      apiKey: KEY,
      timeoutMs: 90_000,
      resume: true,
    });
    expectCleanRun(resumed);
    const again = sampled(proxy.turnsSince(before));
    expect(again.every((t) => t.terminal?.type === 'response.completed')).toBe(true);
    expect(again[0].request.input).toContainEqual(expect.objectContaining({ type: 'compaction', id: item.id }));
    expect(commandsOf(again)).toEqual(['git status --short']);
    expect(outputTypes(again[again.length - 1])).toEqual(['message']);
  }, 240_000);

  it('compacts locally with a custom provider name: the model writes the handoff summary, and the work goes on', async () => {
    const repo = tempGitRepo();
    const from = proxy.recording.turns.length;
    const run = await runCodex({ home: home('fastloop'), cwd: repo, prompt: PROMPT, apiKey: KEY, timeoutMs: 90_000 });
    expectCleanRun(run);
    const turns = sampled(proxy.turnsSince(from));
    expect(turns.every((t) => t.terminal?.type === 'response.completed')).toBe(true);
    expect(turns.some((t) => t.request.input?.at(-1)?.type === 'compaction_trigger')).toBe(false);

    // The summarisation turn: answered with a handoff that names what is done and what is left.
    const at = turns.findIndex((t) => outputTypes(t).join() === 'message' && t !== turns[turns.length - 1]);
    expect(at).toBeGreaterThan(0);
    const summary: string = turns[at].terminal!.response.output[0].content[0].text;
    expect(summary.split('\n').slice(1)).toEqual([
      `Done so far: exec_command "${COMMANDS[0]}"; exec_command "${COMMANDS[1]}".`,
      `Next steps: run \`${COMMANDS[2]}\` with exec_command.`,
    ]);
    // Codex sends its compacted history, the summary in it, and the model carries on from it.
    const next = turns[at + 1];
    expect(next.request.previous_response_id).toBeUndefined();
    expect(JSON.stringify(next.request.input)).toContain(JSON.stringify(summary).slice(1, -1));
    expect(commandsOf(turns.slice(0, at))).toEqual(COMMANDS.slice(0, 2));
    expect(commandsOf(turns.slice(at + 1))).toEqual(COMMANDS.slice(2));
    expect(run.lastMessage).toMatch(/^Simulated answer after calling exec_command for your request:/);
  }, 240_000);
});
