import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { modelStack, ModelOptionError } from './model-option';

const MODEL = resolve(__dirname, '../../../shared/models/stories260K.gguf');
const describeModel = existsSync(MODEL) ? describe : describe.skip;

describeModel('modelStack (--model)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'fastloop-model-option-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const catalog = () => JSON.parse(readFileSync(join(dir, 'catalog.json'), 'utf8')).models[0];

  it("writes the model's trained context into the catalog when none is configured", async () => {
    const served = await modelStack(MODEL, dir);
    expect(catalog()).toMatchObject({ id: 'stories260K', context_window: 512, max_output_tokens: 512 });
    expect(served.env.LLAMACPP_CONTEXT_SIZE).toBe('0');
  });

  it('follows LLAMACPP_CONTEXT_SIZE: the catalog says the context the worker runs with', async () => {
    const served = await modelStack(MODEL, dir, { contextSize: 1024 });
    expect(catalog()).toMatchObject({ context_window: 1024, max_output_tokens: 1024 });
    expect(served.env.LLAMACPP_CONTEXT_SIZE).toBe('1024');
  });

  it('refuses a context size that is not a whole number of tokens', async () => {
    await expect(modelStack(MODEL, dir, { contextSize: Number('many') })).rejects.toThrow(ModelOptionError);
    await expect(modelStack(MODEL, dir, { contextSize: -1 })).rejects.toThrow('LLAMACPP_CONTEXT_SIZE');
  });
});
