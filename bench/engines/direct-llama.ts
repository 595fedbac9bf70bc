import {
  loadNodeLlamaCpp,
  type ConversationEntry,
  type ModelProfile,
  type RenderHeader,
} from '@fastloop/model-profiles';
import { decodeRate } from './engine-bench-report';

type NodeLlamaCpp = Awaited<ReturnType<typeof loadNodeLlamaCpp>>;
type Llama = Awaited<ReturnType<NodeLlamaCpp['getLlama']>>;
type LlamaModel = Awaited<ReturnType<Llama['loadModel']>>;
type LlamaContext = Awaited<ReturnType<LlamaModel['createContext']>>;
type Sequence = ReturnType<LlamaContext['getSequence']>;
type Token = Parameters<Sequence['evaluate']>[0][number];

/** One turn of the model driven directly. */
export interface DirectTurn {
  promptTokens: number;
  /** Prompt tokens node-llama-cpp evaluated (its token meter). */
  evaluatedTokens: number;
  outputTokens: number;
  outputText: string;
  /** The prompt's tokens in hand → the first sampled token. */
  ttftMs: number;
  tokensPerSecond: number;
}

/**
 * The same model as the worker's, driven with node-llama-cpp in this process, no API around it:
 * one thread, one sequence per conversation, greedy sampling, the same prompt tokens (the same
 * profile renders them) and the same prefix reuse as the worker's engine — keep what the sequence
 * holds up to the first differing token, evaluate the rest; after a turn, evaluate the template's
 * rendering of the answer (untimed, as the worker does it after its last token).
 */
export class DirectLlama {
  private constructor(
    private readonly llama: Llama,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    private readonly sequence: Sequence,
  ) {}

  static async open(modelPath: string, contextSize: number): Promise<DirectLlama> {
    const lib = await loadNodeLlamaCpp();
    const llama = await lib.getLlama({ gpu: false, build: 'never', maxThreads: 1, logLevel: lib.LlamaLogLevel.error });
    const model = await llama.loadModel({ modelPath });
    const context = await model.createContext({ sequences: 1, contextSize, threads: 1 });
    return new DirectLlama(llama, model, context, context.getSequence());
  }

  /**
   * A conversation on the one sequence, which keeps what earlier conversations left in it (as the
   * worker's sequences do): a new conversation reuses whatever prefix they share.
   */
  conversation(profile: ModelProfile, header: RenderHeader, maxOutputTokens: number): DirectConversation {
    return new DirectConversation(this.sequence, profile, header, maxOutputTokens);
  }

  async close(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
    await this.llama.dispose();
  }
}

export class DirectConversation {
  private readonly entries: ConversationEntry[] = [];

  constructor(
    private readonly sequence: Sequence,
    private readonly profile: ModelProfile,
    private readonly header: RenderHeader,
    private readonly maxOutputTokens: number,
  ) {}

  async turn(text: string): Promise<DirectTurn> {
    this.entries.push({ kind: 'message', role: 'user', text });
    const prompt = this.profile.render(this.header, this.entries);
    const stops = new Set(this.profile.stopTokens);
    const startedAt = performance.now();
    const keep = Math.min(commonPrefix(this.sequence.contextTokens, prompt), prompt.length - 1);
    const meter = this.sequence.tokenMeter.getState();
    if (this.sequence.nextTokenIndex > keep)
      await this.sequence.eraseContextTokenRanges([{ start: keep, end: this.sequence.nextTokenIndex }]);
    const completion: number[] = [];
    let first = 0;
    let last = 0;
    let evaluated = 0;
    for await (const token of this.sequence.evaluate(prompt.slice(keep) as Token[], { temperature: 0 })) {
      last = performance.now();
      if (completion.length === 0) {
        first = last;
        const d = this.sequence.tokenMeter.diff(meter);
        evaluated = d.usedInputTokens + d.usedOutputTokens;
      }
      completion.push(token as number);
      if (stops.has(token as number) || completion.length >= this.maxOutputTokens) break;
    }
    const parser = this.profile.createOutputParser();
    const outputText = [...parser.push(completion), ...parser.finish()]
      .map((e) => (e.type === 'delta' ? e.text : ''))
      .join('');
    this.entries.push({ kind: 'message', role: 'assistant', text: outputText });
    await this.align();
    return {
      promptTokens: prompt.length,
      evaluatedTokens: evaluated,
      outputTokens: completion.length,
      outputText,
      ttftMs: first - startedAt,
      tokensPerSecond: decodeRate(completion.length, first, last),
    };
  }

  /** Holds the conversation as the next prompt renders it (its generation prompt aside). */
  private async align(): Promise<void> {
    const next = this.profile.render(this.header, this.entries);
    const target = next.slice(0, next.length - this.profile.renderGenerationPrompt().length);
    const keep = commonPrefix(this.sequence.contextTokens, target);
    if (keep === target.length) return;
    if (this.sequence.nextTokenIndex > keep)
      await this.sequence.eraseContextTokenRanges([{ start: keep, end: this.sequence.nextTokenIndex }]);
    await this.sequence.evaluateWithoutGeneratingNewTokens(target.slice(keep) as Token[]);
  }
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}
