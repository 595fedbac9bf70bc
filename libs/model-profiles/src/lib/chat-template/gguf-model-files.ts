import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ModelFiles, TextTokenizer } from './text-tokenizer';
import { loadNodeLlamaCpp } from './node-llama-cpp-module';

/** A GGUF file that is missing or that llama.cpp cannot read. */
export class ModelFileError extends Error {
  readonly code = 'model_file_invalid';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ModelFileError';
  }
}

/**
 * Reads the tokenizer and chat template out of a GGUF file with node-llama-cpp's vocabulary-only
 * load (~0.1 s, no weights): tokenization is llama.cpp's own, exactly what the engine would do.
 */
export async function loadGgufModelFiles(path: string): Promise<ModelFiles> {
  if (!existsSync(path) || !statSync(path).isFile()) throw new ModelFileError(`model file not found: ${path}`);
  const { getLlama, LlamaLogLevel } = await loadNodeLlamaCpp();
  const llama = await getLlama({ gpu: false, build: 'never', maxThreads: 1, logLevel: LlamaLogLevel.error });
  let model;
  try {
    model = await llama.loadModel({ modelPath: path, vocabOnly: true });
  } catch (cause) {
    throw new ModelFileError(`not a readable GGUF model file: ${path} (${(cause as Error).message})`, { cause });
  }
  const tokens = model.tokens;
  const encodeText = (text: string): number[] =>
    text === '' ? [] : (model.tokenize(text, false, 'trimLeadingSpace') as number[]);
  const specials = specialTokenTexts(model.fileInfo.metadata);
  const ids = (t: unknown): number | undefined => (typeof t === 'number' && t >= 0 ? t : undefined);
  // Prompts are tokenized in segments; SentencePiece's dummy-prefix space would otherwise land at
  // the start of every segment, where the text has none (hence 'trimLeadingSpace').
  const stopTokens = [...new Set([ids(tokens.eos), ids(tokens.eot)].filter((t): t is number => t !== undefined))];
  const vocabSize = vocabularySize(model.fileInfo.metadata);
  const tokenizer: TextTokenizer = {
    vocabSize,
    bos: ids(tokens.bos),
    stopTokens,
    encodeText,
    encodeMarkup: (text) => encodeMarkup(text, specials, encodeText),
    decode: (ids) => model.detokenize(ids as never, true),
  };
  const metadata = model.fileInfo.metadata as { tokenizer?: { chat_template?: string } };
  return {
    tokenizer,
    chatTemplate:
      typeof metadata.tokenizer?.chat_template === 'string' ? metadata.tokenizer.chat_template : templateBeside(path),
    trainContextSize: contextLength(model.fileInfo.metadata),
    bosText: tokens.bosString ?? '',
    eosText: tokens.eosString ?? '',
  };
}

function vocabularySize(metadata: unknown): number {
  const list = (metadata as { tokenizer?: { ggml?: { tokens?: unknown[] } } }).tokenizer?.ggml?.tokens;
  if (!Array.isArray(list) || list.length === 0)
    throw new ModelFileError('GGUF file has no tokenizer vocabulary (tokenizer.ggml.tokens)');
  return list.length;
}

/** `<arch>.context_length` (a vocabulary-only load reports no train context size). */
function contextLength(metadata: unknown): number {
  const m = metadata as Record<string, Record<string, unknown> | undefined> & { general?: { architecture?: string } };
  const arch = m.general?.architecture;
  const value = arch ? m[arch]?.context_length : undefined;
  if (typeof value !== 'number' || value <= 0)
    throw new ModelFileError(`GGUF file has no ${arch ?? '<arch>'}.context_length`);
  return value;
}

// GGUF token types (llama.cpp's llama_token_type): control tokens and user-defined ones are the
// texts a template writes as markup.
const CONTROL = 3;
const USER_DEFINED = 4;

/** Special token texts (longest first, so a longer marker wins over its prefix) and their ids. */
function specialTokenTexts(metadata: unknown): Array<[string, number]> {
  const ggml = (metadata as { tokenizer?: { ggml?: { tokens?: string[]; token_type?: number[] } } }).tokenizer?.ggml;
  const out: Array<[string, number]> = [];
  ggml?.tokens?.forEach((text, id) => {
    const type = ggml.token_type?.[id];
    if ((type === CONTROL || type === USER_DEFINED) && text.length > 0) out.push([text, id]);
  });
  return out.sort((a, b) => b[0].length - a[0].length);
}

/** Markup: special token texts become their ids, the text between them is tokenized as text. */
function encodeMarkup(
  text: string,
  specials: ReadonlyArray<[string, number]>,
  encodeText: (t: string) => number[],
): number[] {
  const out: number[] = [];
  const firsts = new Set(specials.map(([s]) => s[0]));
  let plain = '';
  for (let i = 0; i < text.length;) {
    const hit = firsts.has(text[i]) ? specials.find(([s]) => text.startsWith(s, i)) : undefined;
    if (hit) {
      for (const t of encodeText(plain)) out.push(t);
      plain = '';
      out.push(hit[1]);
      i += hit[0].length;
    } else {
      plain += text[i++];
    }
  }
  for (const t of encodeText(plain)) out.push(t);
  return out;
}

/**
 * The `chat_template` of a Hugging Face `tokenizer_config.json` beside the GGUF file, for files
 * converted without one in their metadata (a string, or the `default` of a named list).
 */
function templateBeside(modelPath: string): string | undefined {
  const file = join(dirname(modelPath), 'tokenizer_config.json');
  if (!existsSync(file)) return undefined;
  let config: { chat_template?: unknown };
  try {
    config = JSON.parse(readFileSync(file, 'utf8')) as { chat_template?: unknown };
  } catch (cause) {
    throw new ModelFileError(`unreadable ${file}: ${(cause as Error).message}`, { cause });
  }
  const template = config.chat_template;
  if (typeof template === 'string') return template;
  if (Array.isArray(template)) {
    const named = template.find((t: { name?: unknown }) => t?.name === 'default') as { template?: unknown } | undefined;
    return typeof named?.template === 'string' ? named.template : undefined;
  }
  return undefined;
}
