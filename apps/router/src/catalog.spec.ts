import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@fastloop/service-kit';
import { loadCatalog, parseCatalog } from './catalog';

const model = (over: Record<string, unknown> = {}) => ({
  id: 'm1',
  owned_by: 'acme',
  created: 1700000000,
  profile: 'harmony-o200k',
  context_window: 8192,
  max_output_tokens: 1024,
  aliases: [],
  ...over,
});

function problem(raw: unknown): string {
  try {
    parseCatalog(raw, 'test.json');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('catalog was accepted');
}

describe('loadCatalog', () => {
  it('loads the embedded default catalog when no file is given', () => {
    const catalog = loadCatalog(undefined);
    expect(catalog.models).toHaveLength(1);
    expect(catalog.models[0]).toMatchObject({
      id: 'fastloop-sim',
      owned_by: 'fastloop',
      profile: 'harmony-o200k',
      context_window: 131072,
      max_output_tokens: 32768,
      engine_model: 'fastloop-sim',
      aliases: ['gpt-oss-sim', 'default'],
    });
  });

  it('resolves the id and every alias to the canonical model, and nothing else', () => {
    const catalog = loadCatalog(undefined);
    for (const name of ['fastloop-sim', 'gpt-oss-sim', 'default'])
      expect(catalog.resolve(name)?.id).toBe('fastloop-sim');
    expect(catalog.resolve('Default')).toBeUndefined();
    expect(catalog.resolve('gpt-4o')).toBeUndefined();
  });

  it('reads a catalog file and names the file when it is not JSON or missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'router-catalog-'));
    try {
      const good = join(dir, 'good.json');
      writeFileSync(good, JSON.stringify({ models: [model({ engine_model: 'upstream-name' })] }));
      expect(loadCatalog(good).resolve('m1')?.engine_model).toBe('upstream-name');
      const bad = join(dir, 'bad.json');
      writeFileSync(bad, '{ not json');
      expect(() => loadCatalog(bad)).toThrow(/ROUTER_CATALOG_FILE: cannot read JSON model catalog '.*bad\.json'/);
      expect(() => loadCatalog(join(dir, 'missing.json'))).toThrow(/missing\.json/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('parseCatalog', () => {
  it('defaults engine_model to the id and aliases to none', () => {
    const { aliases: _a, ...noAliases } = model();
    expect(parseCatalog({ models: [noAliases] }, 'x').models[0]).toMatchObject({ engine_model: 'm1', aliases: [] });
  });

  it('names a missing or mistyped field', () => {
    const { owned_by: _o, ...missing } = model();
    expect(problem({ models: [missing] })).toMatch(/test\.json: models\[0\]\.owned_by: /);
    expect(problem({ models: [model(), model({ id: 'm2', context_window: '8k' })] })).toMatch(
      /models\[1\]\.context_window: /,
    );
    expect(problem({ models: [model({ created: -1 })] })).toMatch(/models\[0\]\.created: /);
  });

  it('names unknown fields, so typos are not silently ignored', () => {
    expect(problem({ models: [model({ context_windw: 1 })] })).toMatch(/models\[0\]: .*context_windw/);
  });

  it('rejects an empty catalog and output limits beyond the context window', () => {
    expect(problem({ models: [] })).toMatch(/models: must list at least one model/);
    expect(problem({ models: [model({ max_output_tokens: 9000 })] })).toMatch(
      /models\[0\]\.max_output_tokens: must not exceed context_window/,
    );
  });

  it('rejects duplicate ids, duplicate aliases and aliases that shadow an id', () => {
    expect(problem({ models: [model(), model()] })).toMatch(/models\[1\]\.id: 'm1' is already used by model 'm1'/);
    expect(problem({ models: [model({ aliases: ['a'] }), model({ id: 'm2', aliases: ['a'] })] })).toMatch(
      /models\[1\]\.aliases\[0\]: 'a' is already used by model 'm1'/,
    );
    expect(problem({ models: [model(), model({ id: 'm2', aliases: ['m1'] })] })).toMatch(
      /models\[1\]\.aliases\[0\]: 'm1' is already used/,
    );
    expect(problem({ models: [model({ aliases: ['m1'] })] })).toMatch(/models\[0\]\.aliases\[0\]/);
  });

  it('rejects model names with spaces or control characters', () => {
    expect(problem({ models: [model({ id: 'my model' })] })).toMatch(/models\[0\]\.id: must be 1-128 characters/);
  });
});
