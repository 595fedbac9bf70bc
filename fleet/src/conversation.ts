/**
 * A coding agent's conversation as a fleet agent plays it: a tool the simulated model calls, the
 * tool's output sent back, then a new user message once it answers. Keeps the whole history, so a
 * turn can be sent either as a continuation (`previous_response_id` + the new items) or, after the
 * server lost the chain, as the full input (what OpenAI documents for `store: false`).
 */
export type Item = Record<string, unknown> & { type: string };

/** The tools every fleet agent offers: one shell-like function the simulated model calls. */
export const TOOLS = [
  {
    type: 'function',
    name: 'run',
    description: 'Runs a shell command in the repository',
    parameters: {
      type: 'object',
      properties: { cmd: { type: 'string' } },
      required: ['cmd'],
      additionalProperties: false,
    },
    strict: true,
  },
] as const;

export const MODEL = 'fastloop-sim';

/** Turns per conversation before the agent starts a new one (keeps prompts short and turns fast). */
const TURNS_PER_CONVERSATION = 12;

export class Conversation {
  private history: Item[] = [];
  private pending: Item[];
  private previousId: string | undefined;
  turns = 0;

  constructor(
    private readonly agent: string,
    private serial = 0,
  ) {
    this.pending = [this.userMessage()];
  }

  /** The body of the next turn: a continuation when there is a chain, else the full history. */
  body(store: boolean, mode: 'continue' | 'full'): Record<string, unknown> {
    const chained = mode === 'continue' && this.previousId !== undefined;
    return {
      model: MODEL,
      tools: TOOLS,
      store,
      instructions: `You are agent ${this.agent}. Use the run tool, then answer briefly.`,
      input: chained ? this.pending : [...this.history, ...this.pending],
      ...(chained ? { previous_response_id: this.previousId } : {}),
    };
  }

  /** The server answered: its output joins the history and decides what the agent sends next. */
  accept(response: { id: string; output: Item[] }): void {
    // Output items go back as input as they came (with their ids), as the Responses API allows.
    this.history.push(...this.pending, ...response.output);
    this.previousId = response.id;
    this.turns++;
    const calls = response.output.filter((o) => o.type === 'function_call');
    if (this.turns >= TURNS_PER_CONVERSATION && calls.length === 0) return this.restart();
    this.pending =
      calls.length > 0
        ? calls.map((c) => ({ type: 'function_call_output', call_id: c.call_id, output: `ok: ${this.turns}` }))
        : [this.userMessage()];
  }

  /** The server no longer has the chain (its connection-local state went with its edge). */
  forgetChain(): void {
    this.previousId = undefined;
  }

  private restart(): void {
    this.serial++;
    this.history = [];
    this.previousId = undefined;
    this.turns = 0;
    this.pending = [this.userMessage()];
  }

  private userMessage(): Item {
    return {
      type: 'message',
      role: 'user',
      content: `Task ${this.serial}.${this.turns} for ${this.agent}: list the files`,
    };
  }
}
