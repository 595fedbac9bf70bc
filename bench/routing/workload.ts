import { createRandom, hashString, pickInt, type Random } from '@fastloop/service-kit';
import { AGENT_TOOLS } from '../agent-loop/agent-tools';
import { buildInstructions } from '../agent-loop/instructions';
import type { CorpusFile } from '../agent-loop/source-corpus';
import { SIM_MODEL, toolOutput, type Workload } from '../agent-loop/workload';

/** A shared system prompt (instructions + tools) many conversations start from. */
export interface Root {
  readonly name: string;
  /** Share of new conversations that start from it. */
  readonly weight: number;
  readonly instructions: string;
}

/** Options of {@link RoutingWorkload}. */
export interface RoutingWorkloadOptions {
  seed: number;
  corpus: readonly CorpusFile[];
  /** Shares of new conversations per root, most popular first (a few hot roots, a tail of cold ones). */
  rootWeights: readonly number[];
  /** Size range of one tool output, in characters. */
  outputBytes: readonly [number, number];
}

const TASKS = [
  'The WebSocket e2e suite times out after the last change to the connection cache. Find the cause and fix it.',
  'Add a per-tenant rate limit to the edge, configurable through the environment, with tests.',
  'The billing worker double-counts usage when Redis reconnects during a flush. Reproduce it in a test and fix it.',
  'Refactor the harmony renderer so that tool schemas are rendered once per conversation, keeping the output identical.',
  'Find why the router sends every request of one tenant to the same worker and make placement spread them.',
  'Make the launcher print which port each service listens on, and test it.',
];

/**
 * Many agent conversations over a few shared system prompts ("roots"), as an agent platform sees
 * them: each conversation has its root's instructions and tools (a prefix other conversations of
 * the root share), its own task and its own tool outputs (a history no other conversation has).
 * Clients send `prompt_cache_key` = the root's name, as OpenAI suggests for requests that share a
 * prefix. Conversations are drawn deterministically from the seed.
 */
export class RoutingWorkload {
  readonly roots: readonly Root[];
  private readonly random: Random;
  private next = 0;

  constructor(private readonly options: RoutingWorkloadOptions) {
    const total = options.rootWeights.reduce((a, b) => a + b, 0);
    this.roots = options.rootWeights.map((w, i) => ({
      name: `root-${i}`,
      weight: w / total,
      instructions: `Team ${i} agent.\n\n${buildInstructions(options.seed * 31 + i)}`,
    }));
    this.random = createRandom(options.seed);
  }

  /** The next conversation: its root (drawn by weight) and what it sends. */
  conversation(): { root: Root; workload: Workload; promptCacheKey: string } {
    const id = this.next++;
    const root = this.pickRoot(this.random());
    const seed = hashString(`conversation-${id}`, this.options.seed >>> 0);
    const { corpus, outputBytes } = this.options;
    const workload: Workload = {
      model: SIM_MODEL,
      instructions: root.instructions,
      tools: AGENT_TOOLS,
      userPrompt: `Ticket #${100_000 + id}: ${TASKS[pickInt(createRandom(seed), 0, TASKS.length - 1)]}`,
      toolOutput: (turn, toolName) =>
        toolOutput(corpus, hashString(`turn-${turn}`, seed), outputBytes, toolName).replace(/^/, `[ticket ${id}] `),
    };
    return { root, workload, promptCacheKey: root.name };
  }

  private pickRoot(u: number): Root {
    let acc = 0;
    for (const r of this.roots) {
      acc += r.weight;
      if (u < acc) return r;
    }
    return this.roots[this.roots.length - 1];
  }
}
