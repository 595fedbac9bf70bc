import {
  ApiErrors,
  createUsage,
  isKnownInputItem,
  newId,
  type CompactedUserMessage,
  type InputItem,
  type MessageItem,
  type OutputCompaction,
  type ResponseCreateRequest,
  type Usage,
} from '@fastloop/protocol';
import type { TurnOutcome } from './finish-stage';
import type { ConversationState } from './conversation-state';
import type { TurnDeps, TurnRequest } from './turn-deps';

/** How compaction summarises; each field has its `EDGE_COMPACTION_*` variable and default. */
export interface CompactionOptions {
  /** Output tokens the summary may take (EDGE_COMPACTION_MAX_OUTPUT_TOKENS, default 2048). */
  maxSummaryTokens: number;
  /**
   * Characters of the latest user messages `POST /v1/responses/compact` keeps verbatim before the
   * compaction item (EDGE_COMPACTION_KEEP_USER_CHARS, default 80,000: about 20k tokens); older ones
   * live on in the summary only.
   */
  keepUserChars: number;
}

export const DEFAULT_COMPACTION: Readonly<CompactionOptions> = Object.freeze({
  maxSummaryTokens: 2048,
  keepUserChars: 80_000,
});

/** What the serving model is asked, after the conversation, to write the summary. */
export const SUMMARY_REQUEST =
  'Compact this conversation so the work can continue in a fresh context: write a handoff summary ' +
  "of the user's goals and constraints, what has been done and decided (files, commands, results, " +
  'errors) and the next steps. Write only the summary.';

/** A summary written by the serving model, sealed, and what writing it cost. */
export interface Summary {
  /** The summarising response's id: its usage record's. */
  responseId: string;
  /** The summary as a compaction item, sealed for the caller's tenant. */
  item: OutputCompaction;
  usage: Usage;
}

/** Runs a nested turn through the whole pipeline (run-turn.ts hands its own `runTurn` in). */
export type RunNested = (req: TurnRequest) => Promise<TurnOutcome>;

/**
 * Summarises `items` with the serving model: a turn of its own through the whole pipeline (safety
 * scans what it reads and, with output moderation, what it writes; its usage record bills it),
 * with tools hidden and nothing stored. `previous`, when `items` extend it, lets the worker reuse
 * the session prefix it holds; otherwise `items` are the whole conversation.
 */
export async function summarize(
  run: RunNested,
  deps: TurnDeps,
  req: TurnRequest,
  on: { items: readonly InputItem[]; previous?: ConversationState },
): Promise<Summary> {
  const { items, previous } = on;
  const options = deps.compaction ?? DEFAULT_COMPACTION;
  const seal = deps.reasoningSeal;
  if (!seal) throw ApiErrors.server('Compaction needs a sealing key (EDGE_REASONING_KEYS).');
  const ask: MessageItem = { type: 'message', role: 'user', content: SUMMARY_REQUEST };
  const body: ResponseCreateRequest = {
    ...req.body,
    input: [...items, ask],
    previous_response_id: previous?.response.id,
    store: false,
    tool_choice: 'none',
    include: undefined,
    text: undefined,
    context_management: undefined,
    max_output_tokens: options.maxSummaryTokens,
  };
  const sub: TurnRequest = { ...req, body, previous, generate: true, validateMs: 0, loadMs: 0 };
  const outcome = await run(sub);
  if (outcome.error) throw outcome.error;
  // A summary output moderation stopped is not sealed, whole or in part.
  if (outcome.response.incomplete_details?.reason === 'content_filter')
    throw ApiErrors.contentBlocked('The conversation could not be compacted: its summary was blocked by safety.');
  const text = outcome.response.output
    .flatMap((item) => (item.type === 'message' ? item.content.map((part) => part.text) : []))
    .join('');
  if (text.trim() === '')
    throw ApiErrors.server('The model wrote an empty summary; the conversation was not compacted.');
  const usage = outcome.response.usage ?? createUsage({ inputTokens: 0, outputTokens: 0 });
  const encrypted = seal.seal(text, req.principal.tenant, 'compaction');
  return {
    responseId: outcome.response.id,
    item: { id: newId('cmp'), type: 'compaction', encrypted_content: encrypted },
    usage,
  };
}

/**
 * The latest user messages whose text fits `chars`, oldest first, as a compaction keeps them
 * (content parts as sent; a string becomes one `input_text` part).
 */
export function keptUserMessages(items: Iterable<InputItem>, chars: number): CompactedUserMessage[] {
  const users: CompactedUserMessage[] = [];
  for (const item of items) {
    if (!isKnownInputItem(item) || item.type !== 'message' || item.role !== 'user') continue;
    const content =
      typeof item.content === 'string' ? [{ type: 'input_text' as const, text: item.content }] : item.content;
    users.push({ id: item.id ?? newId('msg'), type: 'message', role: 'user', status: 'completed', content });
  }
  let used = 0;
  let from = users.length;
  while (from > 0) {
    const size = JSON.stringify(users[from - 1].content).length;
    if (used + size > chars) break;
    used += size;
    from--;
  }
  return users.slice(from);
}
