import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PROFILE_ID, getProfile } from '@fastloop/model-profiles';
import { AGENT_TOOLS } from './agent-tools';
import { buildInstructions } from './instructions';
import { loadCorpus, type CorpusFile } from './source-corpus';
import { createWorkload, rolloutNonce, toolOutput } from './workload';

const line = (i: number) => `export const value${i} = compute(${i}, 'some text to make the line realistic');`;
const corpus: CorpusFile[] = ['a.ts', 'b.ts', 'c.ts'].map((path, f) => ({
  path: `apps/x/src/${path}`,
  text: Array.from({ length: 80 }, (_, i) => line(f * 100 + i)).join('\n'),
}));

describe('createWorkload', () => {
  it('gives the same instructions, prompt and tool outputs for the same seed and corpus', () => {
    const a = createWorkload({ seed: 7, outputBytes: [2048, 8192], corpus });
    const b = createWorkload({ seed: 7, outputBytes: [2048, 8192], corpus });
    expect(b.instructions).toBe(a.instructions);
    expect(b.userPrompt).toBe(a.userPrompt);
    for (let turn = 1; turn <= 20; turn++)
      expect(b.toolOutput(turn, 'read_file')).toBe(a.toolOutput(turn, 'read_file'));
  });

  it('gives other tool outputs for another seed and for each turn', () => {
    const a = createWorkload({ seed: 1, outputBytes: [2048, 8192], corpus });
    const b = createWorkload({ seed: 2, outputBytes: [2048, 8192], corpus });
    expect(b.toolOutput(3, 'grep')).not.toBe(a.toolOutput(3, 'grep'));
    expect(a.toolOutput(4, 'grep')).not.toBe(a.toolOutput(3, 'grep'));
  });

  it('offers the ten coding-agent tools with object schemas', () => {
    const w = createWorkload({ seed: 1, outputBytes: [100, 200], corpus });
    expect(w.tools.map((t) => t.name)).toEqual([
      'read_file',
      'write_file',
      'list_dir',
      'grep',
      'run_shell',
      'apply_patch',
      'search_web',
      'git_diff',
      'run_tests',
      'open_url',
    ]);
    for (const t of AGENT_TOOLS) expect(t.parameters).toMatchObject({ type: 'object', additionalProperties: false });
  });
});

describe('rollout nonces', () => {
  it('make every prompt its own while keeping its size in tokens', () => {
    const profile = getProfile(DEFAULT_PROFILE_ID);
    const plain = createWorkload({ seed: 3, outputBytes: [2048, 4096], corpus });
    const nonces = ['ws|1|1000', 'http-stateless|1|1000', 'grpc|2|65', 'http-previous|7|4000'].map((k) =>
      rolloutNonce(3, k),
    );
    expect(new Set(nonces).size).toBe(nonces.length);
    const sized = nonces.map((nonce) => createWorkload({ seed: 3, outputBytes: [2048, 4096], corpus, nonce }));
    for (const w of sized) expect(w.instructions.endsWith(plain.instructions)).toBe(true);
    expect(new Set(sized.map((w) => w.instructions)).size).toBe(sized.length);
    expect(new Set(sized.map((w) => profile.encodeText(w.instructions).length)).size).toBe(1);
    for (let turn = 1; turn <= 8; turn++) {
      const outputs = sized.map((w) => w.toolOutput(turn, 'grep'));
      expect(new Set(outputs).size).toBe(outputs.length);
      expect(new Set(outputs.map((o) => profile.encodeText(o).length)).size).toBe(1);
    }
  });

  it('are nine-digit numbers, deterministic in seed and key', () => {
    for (let i = 0; i < 200; i++) {
      const n = rolloutNonce(i, `ws|${i}`);
      expect(String(n)).toMatch(/^[1-9]\d{8}$/);
      expect(rolloutNonce(i, `ws|${i}`)).toBe(n);
    }
    expect(() => createWorkload({ seed: 1, outputBytes: [10, 20], corpus, nonce: 12 })).toThrow(/9 digits/);
  });
});

describe('toolOutput', () => {
  it('cuts outputs within the size range, continuing into the next file when one runs out', () => {
    for (let seed = 0; seed < 50; seed++) {
      const out = toolOutput(corpus, seed, [2048, 8192], 'read_file');
      expect(out.length).toBeGreaterThanOrEqual(2048);
      expect(out.length).toBeLessThanOrEqual(8192);
    }
    expect(toolOutput(corpus, 3, [7000, 7000], 'run_shell')).toMatch(/\$ cat apps\/x\/src\/\w\.ts/);
  });

  it('frames lines the way the named tool would', () => {
    expect(toolOutput(corpus, 1, [300, 300], 'grep')).toMatch(/^apps\/x\/src\/\w\.ts:\d+:export const/);
    expect(toolOutput(corpus, 1, [300, 300], 'git_diff')).toMatch(/^diff --git a\//);
  });
});

describe('buildInstructions', () => {
  it('is deterministic and about 2,000 tokens long', () => {
    const text = buildInstructions(1);
    expect(buildInstructions(1)).toBe(text);
    const tokens = getProfile(DEFAULT_PROFILE_ID).encodeText(text).length;
    expect(tokens).toBeGreaterThan(1_700);
    expect(tokens).toBeLessThan(2_400);
  });
});

describe('loadCorpus', () => {
  it('reads .ts files under apps/ and libs/ sorted by path, skipping specs, fakes and secret-like text', () => {
    const root = mkdtempSync(join(tmpdir(), 'bench-corpus-'));
    const body = 'x'.repeat(300);
    const files: Record<string, string> = {
      'libs/z/src/b.ts': body,
      'apps/a/src/a.ts': body,
      'apps/a/src/a.spec.ts': body,
      'apps/a/src/testing/fake.ts': body,
      'apps/a/src/keys.ts': `${body}\n-----BEGIN RSA PRIVATE KEY-----`,
      'apps/a/src/tiny.ts': 'x',
      'tools/t.ts': body,
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    expect(loadCorpus(root).map((f) => f.path)).toEqual(['apps/a/src/a.ts', 'libs/z/src/b.ts']);
  });
});
