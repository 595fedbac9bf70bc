import type { Logger } from 'pino';
import {
  HERMES_FORMAT,
  LLAMA3_JSON_FORMAT,
  loadNodeLlamaCpp,
  ModelFileError,
  type ModelProfile,
  type NodeLlamaCpp,
} from '@fastloop/model-profiles';
import type { Engine, EngineRequest } from '../../engine';
import { contextLengthExceeded } from '../../inference-errors';
import { callFraming, type CallFraming } from './call-framing';
import { canonicalCompletion } from './canonical-completion';
import { constraintFor, constraintGbnf, toolCallWrapperOf, type ToolCallWrapper } from './constraint-grammar';
import { commonPrefixLength, SequencePool } from './sequence-pool';

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

/** How one call samples: under which grammar, after which given tokens, followed by which. */
interface SamplingPlan {
  grammar?: Grammar;
  /** Evaluated after the prompt and yielded first, never sampled (a forced call's start). */
  forced: readonly number[];
  /** Yielded after the model ends a forced call (its end and the end of the turn). */
  tail: readonly number[];
}
const FREE: SamplingPlan = { forced: [], tail: [] };

/** The KV state does not hold the prompt after prefill: a wrong skip, never sampled from. */
export class KvStateMismatchError extends Error {}

/**
 * A real model in-process: llama.cpp through node-llama-cpp. Each session's tokens live in one of
 * a bounded set of context sequences; a continuation evaluates only what its sequence does not
 * already hold. What was skipped and evaluated is node-llama-cpp's own count (the sequence's token
 * meter), checked against the KV state before a token is sampled. A tool choice or response format
 * in the prompt becomes a grammar built from the JSON schema (see constraint-grammar.ts), so what
 * is sampled parses, satisfies the schema, and is written as the chat template renders it.
 */
export class LlamaCppEngine implements Engine {
  readonly name = 'llamacpp' as const;
  readonly simulated = false;
  private readonly grammars = new Map<string, Promise<Grammar>>();
  private readonly framings = new Map<string, CallFraming | undefined>();
  private readonly wrapper: ToolCallWrapper;
  private closed = false;

  private constructor(
    private readonly lib: NodeLlamaCpp,
    private readonly llama: Llama,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    private readonly pool: SequencePool<Sequence>,
    private readonly options: LlamaCppEngineOptions,
  ) {
    this.wrapper = toolCallWrapperOf(options.profile, [...HERMES_FORMAT.endMarkers, ...LLAMA3_JSON_FORMAT.endMarkers]);
  }

  /**
   * Loads the model, creates its context and warms it up (one evaluation and one grammar-constrained
   * sample), so the first request after readiness costs what any request costs. A missing or
   * unreadable file is a {@link ModelFileError}.
   */
  static async create(options: LlamaCppEngineOptions): Promise<LlamaCppEngine> {
    const startedAt = performance.now();
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
    const engine = new LlamaCppEngine(lib, llama, model, context, new SequencePool(sequences), options);
    const loadedMs = performance.now() - startedAt;
    await engine.warmUp();
    options.logger.info(
      {
        engine: 'llamacpp',
        model: options.modelPath,
        contextSize: context.contextSize,
        sequences: options.sequences,
        gpu: llama.gpu,
        loadMs: Math.round(loadedMs),
        warmUpMs: Math.round(performance.now() - startedAt - loadedMs),
      },
      'model loaded and warmed up',
    );
    return engine;
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
    const plan = await this.samplingPlan(prompt, request);
    const lease = await this.pool.acquire(prompt, request.sessionKey, request.signal, request.cacheSalt ?? '');
    if (!lease) return;
    const sequence = lease.slot.sequence;
    const completion: number[] = [];
    let discard = request.signal.aborted;
    try {
      // llama.cpp needs at least one evaluated token to sample from, even on a full match.
      const reuse = Math.min(lease.commonPrefix, prompt.length - 1);
      const held = sequence.nextTokenIndex;
      // Metered from before the erase: whatever node-llama-cpp re-evaluates because of it counts.
      const meter = sequence.tokenMeter.getState();
      if (held > reuse) await sequence.eraseContextTokenRanges([{ start: reuse, end: held }]);
      let reported = false;
      const report = () => {
        if (reported) return;
        reported = true;
        const { usedInputTokens, usedOutputTokens } = sequence.tokenMeter.diff(meter);
        // node-llama-cpp meters every token it decodes: the prompt's, the forced ones, then each
        // sampled one fed back. Before the first token is sampled that is the prompt's evaluated
        // part and the forced tokens (output, not prompt).
        const evaluated = Math.max(0, usedInputTokens + usedOutputTokens - plan.forced.length);
        request.onPrefill?.({ cachedTokens: Math.max(0, prompt.length - evaluated), evaluatedTokens: evaluated });
      };
      const limit = Math.min(request.maxOutputTokens, this.contextSize - prompt.length - plan.forced.length);
      const grammarEvaluationState = plan.grammar
        ? new this.lib.LlamaGrammarEvaluationState({ model: this.model, grammar: plan.grammar })
        : undefined;
      const tokens = sequence.evaluate([...prompt.slice(reuse), ...plan.forced] as Token[], {
        temperature: request.temperature ?? 1,
        topP: request.topP,
        seed: request.seed,
        grammarEvaluationState,
      });
      this.logLease(request, prompt.length, reuse, held);
      const emit = (given: readonly number[]) => {
        const out: number[] = [];
        for (const t of given) {
          if (completion.length >= limit) break;
          completion.push(t);
          out.push(t);
          if (request.stopTokens.has(t)) break;
        }
        return out;
      };
      const stopped = () => completion.length > 0 && request.stopTokens.has(completion[completion.length - 1]);
      const ended = () => {
        if (stopped()) return true;
        if (completion.length < limit) return false;
        if (limit < request.maxOutputTokens) request.onContextFull?.();
        return true;
      };
      let sampledAny = false;
      // Returning from this loop (limit, stop token, abort, or the caller leaving) ends llama.cpp's
      // evaluation at once and hands the sequence, KV state intact, to the next caller.
      for await (const token of tokens) {
        if (!sampledAny) {
          sampledAny = true;
          this.checkHeld(sequence, [...prompt, ...plan.forced]);
          report();
          if (request.signal.aborted) return;
          if (plan.forced.length > 0) yield emit(plan.forced);
          if (ended()) return;
        }
        if (request.signal.aborted) return;
        yield emit([token as number]);
        if (ended()) return;
      }
      // node-llama-cpp ends the iteration at an end-of-generation token, which it does not yield:
      // the model is done (for a forced call, the grammar allowed nothing else after the arguments).
      report();
      if (plan.tail.length > 0 && sampledAny && !request.signal.aborted) {
        const tail = emit(plan.tail);
        if (tail.length > 0) yield tail;
      }
    } catch (err) {
      discard = true;
      throw err;
    } finally {
      // The caller stopped reading at a stop token or the limit (both end the turn as the edge will
      // render it), or at the model's end: the completion is whole. A cancelled call is not.
      discard ||= request.signal.aborted;
      const target = discard ? undefined : this.renderedTarget(prompt, completion);
      // The alignment runs after the call returns (its last token is out, Done can go): the
      // sequence stays leased until it is done, and a next turn that continues it waits for it.
      if (target) this.pool.settle(lease.slot, target, this.alignWith(sequence, target, request));
      // A cancelled call's prompt is not reusable (it may be one safety blocked while overlapping).
      else this.pool.release(lease.slot, discard);
    }
  }

  /**
   * What the sequence should hold after a completion (ended by the model, a stop token or the
   * token limit; not a cancel): what the next turn's prompt will start with, the chat template's
   * rendering of the sampled items rather than the tokens the model chose for the same text (a call
   * sampled under its grammar is the same text; its tokenization and the end-of-turn markup may
   * differ). {@link alignWith} evaluates only the differing tail, so the next turn finds the whole
   * conversation in the KV state. Speculative: a next prompt that differs just matches less.
   */
  private renderedTarget(prompt: readonly number[], completion: readonly number[]): number[] | undefined {
    const rendered = canonicalCompletion(this.options.profile, completion);
    if (!rendered || prompt.length + rendered.length >= this.contextSize) return undefined;
    return [...prompt, ...rendered];
  }

  private async alignWith(sequence: Sequence, target: readonly number[], request: EngineRequest): Promise<void> {
    const same = commonPrefixLength(sequence.contextTokens, target);
    if (same === target.length) return;
    try {
      const held = sequence.nextTokenIndex;
      if (held > same) await sequence.eraseContextTokenRanges([{ start: same, end: held }]);
      const before = sequence.tokenMeter.getState();
      await sequence.evaluateWithoutGeneratingNewTokens(target.slice(same) as Token[]);
      const { usedInputTokens, usedOutputTokens } = sequence.tokenMeter.diff(before);
      request.onAligned?.(usedInputTokens + usedOutputTokens);
    } catch (err) {
      // The sequence keeps whatever it holds; the pool matches by content, so nothing is assumed.
      if (!this.closed)
        this.options.logger.warn({ err, engine: 'llamacpp' }, 'could not align the KV state with the rendering');
    }
  }

  /** node-llama-cpp's record of the KV state must be the prompt, token for token, before sampling. */
  private checkHeld(sequence: Sequence, prompt: readonly number[]): void {
    const held = sequence.contextTokens;
    if (held.length === prompt.length && commonPrefixLength(held, prompt) === prompt.length) return;
    throw new KvStateMismatchError(
      `the KV state holds ${held.length} tokens matching the prompt's first ${commonPrefixLength(held, prompt)} of ${prompt.length}`,
    );
  }

  private logLease(request: EngineRequest, promptTokens: number, reused: number, held: number): void {
    const { logger } = this.options;
    if (logger.isLevelEnabled('debug')) {
      logger.debug(
        { engine: 'llamacpp', sessionKey: request.sessionKey, promptTokens, reused, held },
        'sequence leased',
      );
    }
  }

  /**
   * How to sample what the prompt's tool choice or response format asks for: the grammar (cached
   * by its text) and, for a forced call the template's tokens spell, the call's given start and end.
   */
  private async samplingPlan(prompt: readonly number[], request: EngineRequest): Promise<SamplingPlan> {
    const constraint = constraintFor(this.options.profile.parsePrompt(prompt), request.constraints);
    if (!constraint) return FREE;
    const framing = constraint.kind === 'tool_call' ? this.framingFor(constraint.tools.map((t) => t.name)) : undefined;
    let gbnf: string;
    try {
      gbnf = constraintGbnf(
        constraint,
        this.wrapper,
        framing ? { forcedText: framing.forcedText, tailAppended: true } : undefined,
      );
    } catch (err) {
      // Only a schema nothing satisfies gets here (strict schemas were checked at the edge).
      this.options.logger.warn({ err, engine: 'llamacpp' }, 'no grammar for this JSON schema; sampling unconstrained');
      return FREE;
    }
    let grammar = this.grammars.get(gbnf);
    if (!grammar) {
      grammar = Promise.resolve().then(() => new this.lib.LlamaGrammar(this.llama, { grammar: gbnf }));
      grammar.catch(() => this.grammars.delete(gbnf));
      if (this.grammars.size >= MAX_CACHED_GRAMMARS) this.grammars.delete(this.grammars.keys().next().value as string);
      this.grammars.set(gbnf, grammar);
    }
    return { grammar: await grammar, forced: framing?.forced ?? [], tail: framing?.tail ?? [] };
  }

  /** The framing of a call to one of `names` (cached per name set; undefined: the grammar does it all). */
  private framingFor(names: readonly string[]): CallFraming | undefined {
    const key = JSON.stringify(names);
    if (!this.framings.has(key)) {
      if (this.framings.size >= MAX_CACHED_GRAMMARS) this.framings.delete(this.framings.keys().next().value as string);
      this.framings.set(key, callFraming(this.options.profile, names, this.wrapper));
    }
    return this.framings.get(key);
  }

  /**
   * One evaluation of a short prompt and one grammar-constrained sample on the first sequence,
   * which is then emptied: the first request after startup finds llama.cpp's buffers allocated
   * and its code paths warm.
   */
  private async warmUp(): Promise<void> {
    const { profile } = this.options;
    const prompt = [
      ...profile.renderHeader({ tools: [] }),
      ...profile.renderEntry({ kind: 'message', role: 'user', text: 'Hello.' }),
      ...profile.renderGenerationPrompt(),
    ].slice(-Math.max(1, this.contextSize - 4));
    const grammar = new this.lib.LlamaGrammar(this.llama, { grammar: 'root ::= [a-z]+' });
    const [sequence] = this.pool.all();
    try {
      const tokens = sequence.evaluate(prompt as Token[], {
        grammarEvaluationState: new this.lib.LlamaGrammarEvaluationState({ model: this.model, grammar }),
      });
      await tokens.next();
      await tokens.return();
    } finally {
      await sequence.clearHistory();
    }
  }

  forget(sessionKey: string): void {
    this.pool.discardSession(sessionKey);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.settled();
    await this.context.dispose();
    await this.model.dispose();
    await this.llama.dispose();
  }
}
