import type { Logger } from 'pino';
import { loadNodeLlamaCpp, ModelFileError, type ModelProfile, type NodeLlamaCpp } from '@fastloop/model-profiles';
import type { Engine, EngineRequest } from '../../engine';
import { contextLengthExceeded } from '../../inference-errors';
import { constraintFor, constraintGbnf } from './constraint-grammar';
import { SequencePool } from './sequence-pool';

type Llama = Awaited<ReturnType<NodeLlamaCpp['getLlama']>>;
type LlamaModel = Awaited<ReturnType<Llama['loadModel']>>;
type LlamaContext = Awaited<ReturnType<LlamaModel['createContext']>>;
type Sequence = ReturnType<LlamaContext['getSequence']>;
type Grammar = InstanceType<NodeLlamaCpp['LlamaGrammar']>;
type Token = Parameters<Sequence['evaluate']>[0][number];

/** Options of {@link LlamaCppEngine.create} (LLAMACPP_* configuration). */
export interface LlamaCppEngineOptions {
  modelPath: string;
  /** The profile built from the same file: the engine reads tool choice and schemas through it. */
  profile: ModelProfile;
  /** KV sequences (concurrent sessions whose state is kept); LRU beyond. */
  sequences: number;
  /** Context size per sequence; 0 = the size the model was trained with. */
  contextSize: number;
  threads: number;
  /** Layers offloaded to a GPU that node-llama-cpp finds (CUDA/Vulkan/Metal); 0 = CPU only. */
  gpuLayers: number;
  logger: Logger;
}

const MAX_CACHED_GRAMMARS = 32;

/**
 * A real model in-process: llama.cpp through node-llama-cpp. Each session's tokens live in one of
 * a bounded set of context sequences; a continuation evaluates only what its sequence does not
 * already hold, and reports that skip as the call's cached tokens. A tool choice or response
 * format in the prompt becomes a grammar built from the JSON schema, so what is sampled parses.
 */
export class LlamaCppEngine implements Engine {
  readonly name = 'llamacpp' as const;
  readonly simulated = false;
  private readonly grammars = new Map<string, Promise<Grammar>>();
  private closed = false;

  private constructor(
    private readonly lib: NodeLlamaCpp,
    private readonly llama: Llama,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    private readonly pool: SequencePool<Sequence>,
    private readonly options: LlamaCppEngineOptions,
  ) {}

  /** Loads the model and creates its context; a missing or unreadable file is a {@link ModelFileError}. */
  static async create(options: LlamaCppEngineOptions): Promise<LlamaCppEngine> {
    const lib = await loadNodeLlamaCpp();
    const gpu = options.gpuLayers > 0 ? 'auto' : false;
    const llama = await lib.getLlama({
      gpu,
      build: 'never',
      maxThreads: options.threads,
      logLevel: lib.LlamaLogLevel.error,
    });
    let model: LlamaModel;
    try {
      model = await llama.loadModel({ modelPath: options.modelPath, gpuLayers: options.gpuLayers });
    } catch (cause) {
      await llama.dispose();
      throw new ModelFileError(`cannot load model ${options.modelPath}: ${(cause as Error).message}`, { cause });
    }
    const contextSize = options.contextSize > 0 ? options.contextSize : model.trainContextSize;
    const context = await model.createContext({ sequences: options.sequences, contextSize, threads: options.threads });
    const sequences = Array.from({ length: options.sequences }, () => context.getSequence());
    options.logger.info(
      {
        engine: 'llamacpp',
        model: options.modelPath,
        contextSize: context.contextSize,
        sequences: options.sequences,
        gpu: llama.gpu,
      },
      'model loaded',
    );
    return new LlamaCppEngine(lib, llama, model, context, new SequencePool(sequences), options);
  }

  /** Tokens each sequence can hold. */
  get contextSize(): number {
    return this.context.contextSize;
  }

  async *generate(request: EngineRequest): AsyncGenerator<readonly number[]> {
    if (this.closed) throw new Error('llamacpp engine is closed');
    // node-llama-cpp takes plain arrays; one copy per call, small next to llama.cpp's evaluation.
    const prompt = Array.from(request.prompt);
    if (prompt.length >= this.contextSize) throw contextLengthExceeded(prompt.length, this.contextSize);
    const grammar = await this.grammarFor(prompt);
    const lease = await this.pool.acquire(prompt, request.sessionKey, request.signal, request.cacheSalt ?? '');
    if (!lease) return;
    try {
      const sequence = lease.slot.sequence;
      // llama.cpp needs at least one evaluated token to sample from, even on a full match.
      const reuse = Math.min(lease.commonPrefix, prompt.length - 1);
      const held = sequence.nextTokenIndex;
      if (sequence.nextTokenIndex > reuse)
        await sequence.eraseContextTokenRanges([{ start: reuse, end: sequence.nextTokenIndex }]);
      request.onPrefill?.({ cachedTokens: reuse, evaluatedTokens: prompt.length - reuse });
      const { logger } = this.options;
      if (logger.isLevelEnabled('debug')) {
        logger.debug(
          { engine: 'llamacpp', sessionKey: request.sessionKey, promptTokens: prompt.length, reused: reuse, held },
          'sequence leased',
        );
      }
      const limit = Math.min(request.maxOutputTokens, this.contextSize - prompt.length);
      const grammarEvaluationState = grammar
        ? new this.lib.LlamaGrammarEvaluationState({ model: this.model, grammar })
        : undefined;
      let sampled = 0;
      const tokens = sequence.evaluate(prompt.slice(reuse) as Token[], {
        temperature: request.temperature ?? 1,
        topP: request.topP,
        seed: request.seed,
        grammarEvaluationState,
      });
      // Returning from this loop (limit, stop token, abort, or the caller leaving) ends llama.cpp's
      // evaluation at once and hands the sequence, KV state intact, to the next caller.
      for await (const token of tokens) {
        if (request.signal.aborted) return;
        yield [token as number];
        if (++sampled >= limit || request.stopTokens.has(token as number)) return;
      }
    } finally {
      // A cancelled call's prompt is not reusable (it may be one safety blocked while overlapping).
      this.pool.release(lease.slot, request.signal.aborted);
    }
  }

  /** The grammar the prompt's tool choice or response format asks for (cached by its text). */
  private async grammarFor(prompt: readonly number[]): Promise<Grammar | undefined> {
    const constraint = constraintFor(this.options.profile.parsePrompt(prompt));
    if (!constraint) return undefined;
    const key = `${constraint.kind}:${JSON.stringify(constraint.schema)}`;
    let grammar = this.grammars.get(key);
    if (!grammar) {
      grammar = (async () => {
        const json = await this.llama.createGrammarForJsonSchema(constraint.schema as never);
        return new this.lib.LlamaGrammar(this.llama, { grammar: constraintGbnf(constraint, json.grammar) });
      })();
      grammar.catch(() => this.grammars.delete(key));
      if (this.grammars.size >= MAX_CACHED_GRAMMARS) this.grammars.delete(this.grammars.keys().next().value as string);
      this.grammars.set(key, grammar);
    }
    try {
      return await grammar;
    } catch (err) {
      // A schema node-llama-cpp cannot express is sampled without a grammar rather than refused.
      this.options.logger.warn({ err, engine: 'llamacpp' }, 'no grammar for this JSON schema; sampling unconstrained');
      return undefined;
    }
  }

  forget(sessionKey: string): void {
    this.pool.discardSession(sessionKey);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.context.dispose();
    await this.model.dispose();
    await this.llama.dispose();
  }
}
