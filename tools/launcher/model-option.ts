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

/** Options of {@link modelStack}. */
export interface ModelStackOptions {
  /** Resolves a relative `path`; default the process's working directory. */
  cwd?: string;
  /**
   * Tokens per KV sequence the worker runs the model with (LLAMACPP_CONTEXT_SIZE); 0 or absent:
   * the context the model was trained with. The catalog's context window is this same number, so
   * the edge refuses exactly the prompts the worker could not hold.
   */
  contextSize?: number;
}

/**
 * Serves a GGUF file with the llamacpp engine: checks the file (tokenizer and context length read
 * from it), writes a one-model catalog beside the logs, and returns the env that points the
 * inference worker and the router at them.
 */
export async function modelStack(path: string, dir: string, options: ModelStackOptions = {}): Promise<ModelStack> {
  const file = resolve(options.cwd ?? process.cwd(), path);
  if (!existsSync(file) || !statSync(file).isFile()) throw new ModelOptionError(`--model: no such file: ${file}`);
  let trained: number;
  try {
    trained = (await loadGgufModelFiles(file)).trainContextSize;
  } catch (err) {
    throw new ModelOptionError(`--model: ${file} is not a GGUF model llama.cpp can read: ${(err as Error).message}`);
  }
  const configured = options.contextSize ?? 0;
  if (!Number.isInteger(configured) || configured < 0)
    throw new ModelOptionError(`LLAMACPP_CONTEXT_SIZE: expected a whole number of tokens, got ${configured}`);
  const contextWindow = configured > 0 ? configured : trained;
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
        description: `${file} on llama.cpp (node-llama-cpp, in-process), ${contextWindow} tokens of context`,
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
      LLAMACPP_CONTEXT_SIZE: String(configured),
    },
  };
}
