import { execFileSync } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Stack } from '@fastloop/launcher';
import { CODEX_BIN, CODEX_MODEL_CATALOG, codexHome, removeTempDirs, tempGitRepo } from './codex-cli';
import { RecordingProxy } from './recording-proxy';
import { startTestStack } from './stack-fixture';

// Codex CLI 0.171's TUI, driven through tmux: with `instant_interrupt` and a Responses-Lite model
// (the model catalog's `use_responses_lite`), a message typed while a response streams makes Codex
// send `response.interrupt` (`discard_partial_items`) on its socket; fastloop ends the response
// `incomplete` (`interrupted`) and Codex continues on the same socket from it. Skipped without tmux.
const KEY = 'sk-e2e-codex-interrupt';
const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
})();
const session = `fastloop-codex-interrupt-${process.pid}`;
const tmux = (...args: string[]) => execFileSync('tmux', args, { stdio: 'pipe' }).toString();
const pane = () => tmux('capture-pane', '-t', session, '-p');
/**
 * Types `text` and submits it: Enter goes a moment after the text shows in the pane (typed at once,
 * the TUI takes it as a paste and Enter as a newline), and again if no frame left Codex within 10 s
 * (on a loaded machine the TUI can still be in its paste burst when the first Enter arrives).
 */
async function type(text: string): Promise<void> {
  const before = proxy.recording.turns.length;
  tmux('send-keys', '-t', session, text);
  await until('the typed text', () => pane().includes(text.slice(0, 40)));
  for (let attempt = 1; ; attempt++) {
    await new Promise((r) => setTimeout(r, 1_000));
    tmux('send-keys', '-t', session, 'Enter');
    const deadline = Date.now() + 10_000;
    while (proxy.recording.turns.length === before && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 250));
    if (proxy.recording.turns.length > before || attempt === 3) return;
  }
}

let stack: Stack;
let proxy: RecordingProxy;

beforeAll(async () => {
  if (!hasTmux) return;
  // A long, slow answer (≈ 8 s) so that there is time to type while it streams.
  stack = await startTestStack({
    FASTLOOP_API_KEYS: `${KEY}:codex-interrupt`,
    SIM_TOOL_CALLS: '0',
    SIM_ANSWER_WORDS: '1500',
    SIM_TOKENS_PER_SECOND: '250',
  });
  proxy = await RecordingProxy.start(stack.url);
}, 300_000);

afterAll(async () => {
  try {
    if (hasTmux) execFileSync('tmux', ['kill-session', '-t', session], { stdio: 'ignore' });
  } catch {
    // no session: the test did not get as far as starting Codex
  }
  removeTempDirs(); // also stops the app-server daemon the TUI started, which outlives the session
  await proxy?.close();
  await stack?.stop();
}, 60_000);

async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      const frames = proxy.recording.turns.map((t) => `${t.request.type} -> ${t.terminal?.type ?? 'no terminal'}`);
      throw new Error(
        `timed out waiting for ${what}; frames: ${frames.join(', ') || 'none'}; the pane shows:\n${pane()}`,
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Every frame Codex sent through the proxy, and every terminal event it got back. */
const sent = () => proxy.recording.turns.map((t) => t.request);
const terminals = () => proxy.recording.turns.flatMap((t) => (t.terminal ? [t.terminal] : []));

(hasTmux ? describe : describe.skip)('Codex CLI instant interrupt (TUI in tmux)', () => {
  it('interrupts a streaming response with a typed message, and continues from it on the same socket', async () => {
    const repo = tempGitRepo();
    const home = codexHome(proxy.url, 'fastloop-sim', true);
    const catalog = JSON.parse(readFileSync(CODEX_MODEL_CATALOG, 'utf8'));
    catalog.models[0].use_responses_lite = true;
    writeFileSync(join(home, 'catalog.json'), JSON.stringify(catalog));
    const config = readFileSync(join(home, 'config.toml'), 'utf8').replace(
      CODEX_MODEL_CATALOG,
      join(home, 'catalog.json'),
    );
    writeFileSync(join(home, 'config.toml'), config);
    appendFileSync(
      join(home, 'config.toml'),
      `\n[features]\ninstant_interrupt = true\n\n[projects."${repo}"]\ntrust_level = "trusted"\n`,
    );
    const env = `CODEX_HOME=${home} FASTLOOP_API_KEY=${KEY} OPENAI_API_KEY= NO_COLOR=1`;
    tmux(
      'new-session',
      '-d',
      '-s',
      session,
      '-x',
      '200',
      '-y',
      '50',
      `cd ${repo} && ${env} ${CODEX_BIN} --dangerously-bypass-approvals-and-sandbox`,
    );
    await until('the Codex prompt', () => pane().includes('Ask Codex'));
    await type('Write me a very long story about a lighthouse.');
    await until('the answer to stream', () => (pane().match(/lighthouse/g) ?? []).length >= 3);
    await type('Actually make it about a cat.');
    const interruptedId = () =>
      terminals().find(
        (t) => t.type === 'response.incomplete' && t.response.incomplete_details?.reason === 'interrupted',
      )?.response.id;
    await until('the continuation to complete', () =>
      terminals().some((t) => t.type === 'response.completed' && t.response.previous_response_id === interruptedId()),
    );
    const id = interruptedId();
    expect(sent()).toContainEqual(
      expect.objectContaining({ type: 'response.interrupt', response_id: id, mode: 'discard_partial_items' }),
    );
    const turns = proxy.recording.turns;
    const next = turns.find((t) => t.request.type === 'response.create' && t.request.previous_response_id === id)!;
    expect(JSON.stringify(next.request.input)).toContain('make it about a cat');
    // The socket that carried the interrupted response carried the continuation: the edge kept it
    // open. (Codex may open other sockets of its own, e.g. ahead of a next turn: not counted.)
    const interrupted = turns.find((t) => t.terminal?.response?.id === id)!;
    expect(next.socket).toBe(interrupted.socket);
    expect(proxy.recording.closes.filter((c) => c.by === 'edge')).toEqual([]);
  }, 180_000);
});
