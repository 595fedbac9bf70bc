import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStack, type Stack } from '@fastloop/launcher';
import { getFreePort, startNodeService, type OwnedProcess } from '@fastloop/service-kit';
import { describeWhenAvailable, testModel } from '@fastloop/test-kit';

const repoRoot = join(__dirname, '..');
const model = testModel();
const SERVICES = ['edge', 'safety', 'router', 'inference', 'billing'] as const;

/** Every file under `dir`, relative to it, with forward slashes. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => statSync(join(dir, f)).isFile())
    .map((f) => f.split('\\').join('/'));
}

// The image's /app, staged outside the repository: nothing can resolve from the checkout's node_modules.
describe('deploy/build-bundles.mjs --stage (the image /app)', () => {
  let stage: string;

  beforeAll(() => {
    stage = mkdtempSync(join(tmpdir(), 'fastloop-stage-'));
    const run = spawnSync(process.execPath, [join(__dirname, 'build-bundles.mjs'), '--stage', stage], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`build-bundles.mjs failed (${run.status}):\n${run.stdout}\n${run.stderr}`);
  }, 180_000);

  afterAll(() => rmSync(stage, { recursive: true, force: true }));

  it('writes one bundle per service and installs only the runtime externals, without build-only files', () => {
    for (const s of SERVICES) expect(existsSync(join(stage, 'dist', `${s}.js`))).toBe(true);
    const modules = join(stage, 'node_modules');
    for (const pkg of ['bufferutil', 'utf-8-validate', 'node-gyp-build', 'node-llama-cpp', '@node-llama-cpp/linux-x64'])
      expect(existsSync(join(modules, pkg, 'package.json'))).toBe(true);
    // GPU and other-platform binaries are not installed, and nothing bundled is installed again.
    expect(readdirSync(join(modules, '@node-llama-cpp'))).toEqual(['linux-x64']);
    for (const bundled of ['zod', 'pino', '@grpc/grpc-js', 'ioredis', 'bullmq', 'ws', 'gpt-tokenizer'])
      expect(existsSync(join(modules, bundled))).toBe(false);
    const files = filesUnder(modules);
    expect(files.filter((f) => /\.d\.[cm]?ts$|\.map$|gitRelease\.bundle$/.test(f))).toEqual([]);
  });

  it('starts the five bundles as a stack whose edge answers a response (no tsx, no repository node_modules)', async () => {
    const entries = Object.fromEntries(SERVICES.map((s) => [s, join(stage, 'dist', `${s}.js`)]));
    let stack: Stack | undefined;
    try {
      stack = await startStack({
        port: 0,
        privateRedis: !process.env.REDIS_URL,
        logLevel: 'warn',
        rootDir: stage,
        entries,
        env: {
          SIM_TTFT_MS: '5',
          SIM_TOKENS_PER_SECOND: '20000',
          SIM_TOOL_CALLS: '0',
          USAGE_OUTBOX_DIR: join(stage, 'outbox'),
        },
      });
      const res = await fetch(`${stack.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fastloop-sim', input: 'hello from a bundle', store: false }),
      });
      const body = (await res.json()) as { status?: string; output?: unknown[]; usage?: { output_tokens: number } };
      expect(res.status).toBe(200);
      expect(body.status).toBe('completed');
      expect(body.usage?.output_tokens).toBeGreaterThan(0);
      // A large input tokenizes on the edge's render threads: edge-render-worker.js beside edge.js.
      const large = await fetch(`${stack.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fastloop-sim', input: 'large input '.repeat(8_000), store: false }),
      });
      expect(`${large.status} ${large.status === 200 ? '' : await large.text()}`).toBe('200 ');
    } finally {
      await stack?.stop();
    }
  }, 180_000);

  describeWhenAvailable(model)('the llamacpp engine', () => {
    it('runs from the inference bundle with node-llama-cpp loaded from the staged externals', async () => {
      let worker: OwnedProcess | undefined;
      try {
        const admin = await getFreePort();
        worker = await startNodeService({
          name: 'inference',
          entry: join(stage, 'dist', 'inference.js'),
          cwd: stage,
          readyUrl: `http://127.0.0.1:${admin}/readyz`,
          env: {
            PATH: process.env.PATH,
            GRPC_PORT: '0',
            ADMIN_PORT: String(admin),
            INFERENCE_ENGINE: 'llamacpp',
            LLAMACPP_MODEL_PATH: model.path,
          },
        });
        expect(worker.tail().join('\n')).toMatch(/"engine":"llamacpp".*"msg":"ready"/);
      } finally {
        await worker?.stop(10_000);
      }
    }, 120_000);
  });
});
