import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { ggufProfileId, loadGgufModelFiles } from '@fastloop/model-profiles';

/** What `--model <file.gguf>` adds to the stack: the worker's engine and the router's catalog. */
export interface ModelStack {
  /** The id the model is served under in /v1/models (the file name without `.gguf`). */
  readonly modelId: string;
  /** Variables for every service (`startStack({ env })`). */
  readonly env: Record<string, string>;
}

/** A `--model` / FASTLOOP_MODEL file that cannot be served. */
export class ModelOptionError extends Error {}

/**
 * Serves a GGUF file with the llamacpp engine: checks the file (tokenizer and context length read
 * from it), writes a one-model catalog beside the logs, and returns the env that points the
 * inference worker and the router at them.
 */
export async function modelStack(path: string, dir: string, cwd = process.cwd()): Promise<ModelStack> {
  const file = resolve(cwd, path);
  if (!existsSync(file) || !statSync(file).isFile()) throw new ModelOptionError(`--model: no such file: ${file}`);
  let contextWindow: number;
  try {
    contextWindow = (await loadGgufModelFiles(file)).trainContextSize;
  } catch (err) {
    throw new ModelOptionError(`--model: ${file} is not a GGUF model llama.cpp can read: ${(err as Error).message}`);
  }
  const modelId =
    basename(file)
      .replace(/\.gguf$/i, '')
      .replace(/[^A-Za-z0-9._:/-]/g, '-') || 'model';
  const catalog = {
    models: [
      {
        id: modelId,
        owned_by: 'local',
        created: Math.floor(statSync(file).mtimeMs / 1000),
        description: `${file} on llama.cpp (node-llama-cpp, in-process)`,
        profile: ggufProfileId(file),
        context_window: contextWindow,
        max_output_tokens: contextWindow,
        aliases: ['default'],
      },
    ],
  };
  mkdirSync(dir, { recursive: true });
  const catalogFile = join(dir, 'catalog.json');
  writeFileSync(catalogFile, JSON.stringify(catalog, null, 2));
  return {
    modelId,
    env: {
      INFERENCE_ENGINE: 'llamacpp',
      LLAMACPP_MODEL_PATH: file,
      INFERENCE_PROFILE: ggufProfileId(file),
      ROUTER_CATALOG_FILE: catalogFile,
    },
  };
}
