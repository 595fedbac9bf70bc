import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Stack } from '@fastloop/launcher';
import { codexHome, removeTempDirs, runCodex, tempGitRepo, type CodexRun } from './codex-cli';
import { writeFixture } from './fixtures';
import { MetricsScrape } from './metrics';
import { RecordingProxy, type RecordedTurn } from './recording-proxy';
import { startTestStack } from './stack-fixture';

// The real Codex CLI (npm @openai/codex, pinned) runs `codex exec` against the real stack through a
// recording proxy. The simulated model follows the prompt's explicit instruction (see
// apps/inference/src/sim-instructions.ts): it calls Codex's own exec_command tool with the quoted
// commands, Codex runs them in a temporary git repository, and the model then answers.
const MODEL = 'fastloop-sim';
const KEY = 'sk-e2e-codex';
// Codex's own tools: the freeform apply_patch (a custom tool) writes the file, exec_command stages it.
const PROMPT = [
  'Create hello.txt and stage it. Apply',
  '```',
  '*** Begin Patch',
  '*** Add File: hello.txt',
  '+hello from fastloop',
  '*** End Patch',
  '```',
  'with apply_patch, then run `git add hello.txt` with exec_command.',
].join('\n');

let stack: Stack;
let proxy: RecordingProxy;

beforeAll(async () => {
  stack = await startTestStack({ FASTLOOP_API_KEYS: `${KEY}:codex-tenant`, SIM_TOOL_CALLS: '2' });
  proxy = await RecordingProxy.start(stack.url);
}, 300_000); // two starts (one retry) of up to the readiness budget each

afterAll(async () => {
  removeTempDirs();
  await proxy?.close();
  await stack?.stop();
}, 60_000);

/** Runs the task with Codex; returns the run, the repository and the requests Codex made. */
async function codexTask(websockets: boolean): Promise<{ run: CodexRun; repo: string; turns: RecordedTurn[] }> {
  const repo = tempGitRepo();
  const from = proxy.recording.turns.length;
  const run = await runCodex({
    home: codexHome(proxy.url, MODEL, websockets),
    cwd: repo,
    prompt: PROMPT,
    apiKey: KEY,
    timeoutMs: 60_000,
  });
  const turns = proxy.turnsSince(from);
  if (process.env.FASTLOOP_RECORD_FIXTURES === '1')
    writeFixture(`codex-0.171.0/${websockets ? 'websocket' : 'http'}.jsonl`, turns);
  return { run, repo, turns };
}

/**
 * Codex finished the task: exit 0 and no failed turn. Its verdict rests on what fastloop controls
 * (the exit code here; the frames, the repository's effects and the edge's metrics in the tests).
 * Codex's own diagnostics (stderr, `error` events: offline plugin sync, rollout flushes, model
 * metadata) are Codex's business and vary between its releases; they are printed when the run fails,
 * never judged. A reconnect or an HTTP fallback shows in the recorded frames, which are judged.
 */
function expectCleanRun(run: CodexRun): void {
  const failed = run.events.filter((e) => e.type === 'turn.failed');
  if (run.code === 0 && failed.length === 0) return;
  const detail = `codex exit ${run.code}\nstderr:\n${run.stderr}\nevents:\n${run.events.map((e) => JSON.stringify(e)).join('\n')}`;
  throw new Error(`Codex did not finish the task: ${JSON.stringify(failed)}\n${detail}`);
}

/** Codex applied the patch and ran the command, and the repository shows their effect. */
function expectTaskDone(run: CodexRun, repo: string): void {
  const done = run.events
    .filter((e) => e.type === 'item.completed' && e.item?.type !== 'agent_message')
    .map((e) => e.item);
  expect(done).toEqual([
    expect.objectContaining({
      type: 'file_change',
      status: 'completed',
      changes: [expect.objectContaining({ path: expect.stringMatching(/hello\.txt$/), kind: 'add' })],
    }),
    expect.objectContaining({
      type: 'command_execution',
      command: expect.stringContaining('git add hello.txt'),
      exit_code: 0,
    }),
  ]);
  expect(readFileSync(join(repo, 'hello.txt'), 'utf8')).toBe('hello from fastloop\n');
  expect(execFileSync('git', ['diff', '--cached', '--name-only'], { cwd: repo }).toString().trim()).toBe('hello.txt');
  expect(run.lastMessage).toMatch(/^Simulated answer after calling apply_patch and exec_command for your request:/);
  const agentMessages = run.events.filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message');
  expect(agentMessages.map((e) => e.item.text)).toEqual([run.lastMessage.trimEnd()]);
}

/** Every request ended in response.completed; function outputs answer the calls of the previous response. */
function expectCompletedLoop(turns: RecordedTurn[]): RecordedTurn[] {
  const sampled = turns.filter((t) => t.request.generate !== false);
  for (const t of turns) expect(t.terminal?.type).toBe('response.completed');
  expect(sampled.map((t) => t.terminal!.response.output.map((o: any) => o.type))).toEqual([
    ['custom_tool_call'],
    ['function_call'],
    ['message'],
  ]);
  return sampled;
}

describe('Codex CLI (npm @openai/codex 0.171.0) runs a coding task against fastloop', () => {
  it('over WebSocket mode, chaining continuations by id and never falling back to HTTP', async () => {
    const before = await MetricsScrape.of(stack);
    const { run, repo, turns } = await codexTask(true);
    expectCleanRun(run);
    expectTaskDone(run, repo);

    // What Codex sent: one upgrade, a generate:false warm-up, then continuations with only new items.
    expect(proxy.recording.upgrades.map((u) => u.status)).toEqual([101]);
    expect(turns.every((t) => t.transport === 'websocket')).toBe(true);
    expect(turns[0].request).toMatchObject({ type: 'response.create', generate: false, store: false });
    const sampled = expectCompletedLoop(turns);
    for (let i = 1; i < sampled.length; i++) {
      const previous = sampled[i - 1].terminal!.response;
      expect(sampled[i].request.previous_response_id).toBe(previous.id);
      const outputType =
        previous.output[0].type === 'custom_tool_call' ? 'custom_tool_call_output' : 'function_call_output';
      expect(sampled[i].request.input).toEqual([
        expect.objectContaining({ type: outputType, call_id: previous.output[0].call_id }),
      ]);
    }

    // What the edge saw: only WebSocket turns, each continuation served from the connection cache.
    const after = await MetricsScrape.of(stack);
    const delta = (name: string, labels: Record<string, string>) =>
      after.value(name, labels) - before.value(name, labels);
    expect(delta('fastloop_edge_turns_total', { transport: 'websocket', status: 'completed' })).toBe(turns.length);
    expect(delta('fastloop_edge_turns_total', { transport: 'sse' })).toBe(0);
    expect(delta('fastloop_edge_turns_total', { transport: 'http' })).toBe(0);
    expect(delta('fastloop_edge_state_cache_lookups_total', { result: 'hit' })).toBe(turns.length - 1);
    expect(delta('fastloop_edge_errors_total', {})).toBe(0);
  }, 90_000);

  it('over HTTP+SSE when the provider does not declare WebSocket support', async () => {
    const upgrades = proxy.recording.upgrades.length;
    const before = await MetricsScrape.of(stack);
    const { run, repo, turns } = await codexTask(false);
    expectCleanRun(run);
    expectTaskDone(run, repo);

    expect(proxy.recording.upgrades.length).toBe(upgrades);
    expect(turns.every((t) => t.transport === 'http' && t.request.stream === true)).toBe(true);
    const sampled = expectCompletedLoop(turns);
    // Stateless over HTTP (store: false): every request resends the whole conversation.
    for (let i = 1; i < sampled.length; i++) {
      expect(sampled[i].request.previous_response_id).toBeUndefined();
      expect(sampled[i].request.input.length).toBeGreaterThan(sampled[i - 1].request.input.length);
    }

    const after = await MetricsScrape.of(stack);
    const delta = (name: string, labels: Record<string, string>) =>
      after.value(name, labels) - before.value(name, labels);
    expect(delta('fastloop_edge_turns_total', { transport: 'sse', status: 'completed' })).toBe(turns.length);
    expect(delta('fastloop_edge_turns_total', { transport: 'websocket' })).toBe(0);
    expect(delta('fastloop_edge_errors_total', {})).toBe(0);
  }, 90_000);
});
