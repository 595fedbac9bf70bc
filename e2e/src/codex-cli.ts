import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The Codex CLI binary installed by `npm ci` (`@openai/codex`, pinned in package.json). */
export const CODEX_BIN = resolve(__dirname, '../../node_modules/.bin/codex');

/** How one `codex exec` run went. */
export interface CodexRun {
  code: number | null;
  /** `codex exec --json` events (one JSON object per stdout line). */
  events: Record<string, any>[];
  stderr: string;
  /** What `--output-last-message` wrote: the agent's final answer. */
  lastMessage: string;
}

const tempDirs: string[] = [];

/** A new temp dir, removed by removeTempDirs(). */
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/**
 * Stops every process Codex left under a CODEX_HOME this module created (the TUI starts a managed
 * `codex app-server` daemon in its own session, reparented to init, which outlives the TUI and the
 * tmux session), then removes every repository and CODEX_HOME this module created (call in afterAll).
 */
export function removeTempDirs(): void {
  const dirs = tempDirs.splice(0);
  for (const pid of processesWithEnv(dirs.map((dir) => `CODEX_HOME=${dir}`))) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}

/** Pids of this user's processes whose environment holds one of `entries` exactly (Linux /proc). */
function processesWithEnv(entries: readonly string[]): number[] {
  if (entries.length === 0) return [];
  const wanted = new Set(entries);
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
      if (env.some((entry) => wanted.has(entry))) pids.push(Number(name));
    } catch {
      // exited, or not ours to read
    }
  }
  return pids;
}

/** A fresh git repository with one committed file, for Codex to work in. */
export function tempGitRepo(): string {
  const dir = tempDir('fastloop-codex-repo-');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  git('init', '-q');
  writeFileSync(join(dir, 'README.md'), '# scratch\n');
  git('add', 'README.md');
  git('-c', 'user.email=e2e@fastloop.invalid', '-c', 'user.name=e2e', 'commit', '-qm', 'init');
  return dir;
}

/** Codex's metadata for the simulated model (context window, tool shapes); without it Codex warns on every run. */
export const CODEX_MODEL_CATALOG = resolve(__dirname, 'codex-model-catalog.json');

/** More of a CODEX_HOME's config.toml than codexHome() writes by default. */
export interface CodexConfigExtras {
  /** The provider's display `name` (default `fastloop`): Codex 0.171 picks remote compaction by it. */
  providerName?: string;
  /** Top-level keys, e.g. `model_auto_compact_token_limit = 8000`. */
  topLevel?: string[];
  /** Whole tables after the provider's, e.g. `[features]` and its keys. */
  tables?: string[];
}

/**
 * A CODEX_HOME whose config.toml points Codex at `baseUrl` as a custom Responses provider, the way
 * a user configures a self-hosted endpoint. `websockets` sets `supports_websockets`; retries are
 * off so that any failure shows instead of being retried (or silently falling back to HTTP).
 */
export function codexHome(baseUrl: string, model: string, websockets: boolean, extras: CodexConfigExtras = {}): string {
  const home = tempDir('fastloop-codex-home-');
  mkdirSync(home, { recursive: true });
  writeFileSync(
    join(home, 'config.toml'),
    [
      `model = "${model}"`,
      'model_provider = "fastloop"',
      `model_catalog_json = "${CODEX_MODEL_CATALOG}"`,
      ...(extras.topLevel ?? []),
      '',
      '[model_providers.fastloop]',
      `name = "${extras.providerName ?? 'fastloop'}"`,
      `base_url = "${baseUrl}/v1"`,
      'wire_api = "responses"',
      'env_key = "FASTLOOP_API_KEY"',
      `supports_websockets = ${websockets}`,
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
      ...(extras.tables ?? []),
      '',
    ].join('\n'),
  );
  return home;
}

/**
 * Runs `codex exec --json` on `prompt` in `cwd` without approvals or sandbox (the repository is a
 * throwaway temp dir, and the test machines have no user namespaces for Codex's bubblewrap).
 * `resume` continues the latest session recorded in `home` for `cwd` (`codex exec resume --last`).
 */
export function runCodex(options: {
  home: string;
  cwd: string;
  prompt: string;
  apiKey: string;
  timeoutMs?: number;
  resume?: boolean;
}): Promise<CodexRun> {
  const lastFile = join(options.home, 'last-message.txt');
  const args = [
    'exec',
    ...(options.resume ? ['resume', '--last'] : []),
    '--json',
    '--skip-git-repo-check',
    '--dangerously-bypass-approvals-and-sandbox',
    '--output-last-message',
    lastFile,
    // `resume` takes the directory from its working directory (the spawn's cwd), not -C.
    ...(options.resume ? [] : ['-C', options.cwd]),
    options.prompt,
  ];
  return new Promise((resolvePromise, reject) => {
    const child = spawn(CODEX_BIN, args, {
      cwd: options.cwd,
      env: {
        ...process.env,
        CODEX_HOME: options.home,
        FASTLOOP_API_KEY: options.apiKey,
        OPENAI_API_KEY: '',
        RUST_LOG: 'warn',
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const events = stdout
        .split('\n')
        .filter((l) => l.trim().startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, any>);
      let lastMessage = '';
      try {
        lastMessage = readFileSync(lastFile, 'utf8');
      } catch {
        // no final message: the run failed, which the caller reports with stderr
      }
      resolvePromise({ code, events, stderr, lastMessage });
    });
  });
}
