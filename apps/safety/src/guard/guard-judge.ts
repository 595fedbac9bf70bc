import { createHash, randomUUID } from 'node:crypto';
import {
  GUARD_RESPONSE_FORMAT,
  guardHeader,
  readGuardVerdict,
  type ConversationEntry,
  type ModelProfile,
} from '@fastloop/model-profiles';
import { inferenceV1, type safetyV1 } from '@fastloop/proto';
import { DomainError, ErrorCode } from '@fastloop/service-kit';
import { invalidSafetyState } from '../errors';
import { streamOf } from '../streams';
import type { GuardCompletion, GuardWorker } from './guard-worker';

/** The guard's worker session, carried in the safety state: what the worker already holds. */
export interface GuardSession {
  readonly key: string;
  /** Tokens of the guard's conversation (policy header + items) the session holds. */
  readonly prefixLen: number;
}

/** What the guard said about the new items. */
export interface GuardVerdict {
  readonly verdict: 'allow' | 'block' | 'unavailable';
  readonly session: GuardSession | null;
}

/** Options of a {@link GuardJudge}. */
export interface GuardJudgeOptions {
  worker: GuardWorker;
  /** The guard model's profile (tokenizer + chat format), e.g. harmony for gpt-oss-safeguard. */
  profile: ModelProfile;
  /** Engine model name the worker serves the guard as. */
  model: string;
  /** The policy, given to the guard as its instructions. */
  policy: string;
  /** Deadline of one guard call (`SAFETY_GUARD_TIMEOUT_MS`). */
  timeoutMs: number;
  /** Verdict tokens allowed (`SAFETY_GUARD_MAX_OUTPUT_TOKENS`): the answer is one word. */
  maxOutputTokens: number;
  /** Told about every guard call (metrics). */
  observe?: (call: GuardCall) => void;
}

/** One guard call, as metrics see it. */
export interface GuardCall {
  /**
   * `unreadable`: the guard answered something other than a verdict (judged like `unavailable`);
   * `context_full`: the call did not fit the guard's context (judged again in a fresh window).
   */
  readonly result: 'allow' | 'block' | 'unavailable' | 'unreadable' | 'prefix_miss' | 'context_full';
  /** Prompt tokens sent (what the worker had to prefill beyond the session it holds). */
  readonly sentTokens: number;
  /** Tokens the worker reports it reused. */
  readonly cachedTokens: number;
  /** The whole guard prompt the worker ran (held prefix + sent); minus `cachedTokens`, what it prefilled. */
  readonly promptTokens: number;
  readonly seconds: number;
}

/**
 * A policy (guard) model reached through Generate sessions. The guard's conversation is the policy
 * as instructions plus every classified item as a user message; the worker keeps it as a session
 * whose key and length travel in the safety state, so each call sends only the new items' tokens
 * and the generation prompt — the prefill per turn is proportional to what is new, not to the
 * history. The verdict is a one-word completion (`safe` / `unsafe`, see `guardHeader`: formats with a
 * response format constrain it); anything else is `unreadable` and judged like an unavailable guard.
 */
export class GuardJudge {
  constructor(private readonly options: GuardJudgeOptions) {}

  /**
   * Judges `items` on top of `session`. When the guard's conversation has outgrown the guard
   * model's context (the worker refuses the prompt, or the window cuts the verdict short), the new
   * items are judged again in a fresh window: the policy and these items only. Earlier items were
   * judged when they came; a conversation longer than the guard can read goes on being judged turn
   * by turn instead of failing closed on every turn from then on.
   * @throws DomainError `invalid_safety_state` when the worker lost the session (`prefix_miss`):
   * the caller classifies the whole conversation again with an empty state, which rebuilds it.
   */
  async judge(items: readonly safetyV1.SafetyItem[], session: GuardSession | null, tenant = ''): Promise<GuardVerdict> {
    const o = this.options;
    const entries = items.filter((i) => i.text.length > 0).map(toEntry);
    if (entries.length === 0) return { verdict: 'allow', session };
    const added = entries.flatMap((e) => o.profile.renderEntry(e));
    if (session) {
      const continued = await this.call(added, session, tenant);
      if (continued !== 'context_full') return continued;
    }
    // Append-stable rendering: header ++ entries ++ generation prompt equals render() of them all.
    const fresh = await this.call([...o.profile.renderHeader(guardHeader(o.policy)), ...added], null, tenant);
    // The new items alone do not fit the guard's context: no verdict on them.
    return fresh === 'context_full' ? { verdict: 'unavailable', session: null } : fresh;
  }

  /** One guard call: `conversation` (tokens after the session's prefix) and the generation prompt. */
  private async call(
    conversation: readonly number[],
    session: GuardSession | null,
    tenant: string,
  ): Promise<GuardVerdict | 'context_full'> {
    const o = this.options;
    const prefixLen = session ? session.prefixLen : 0;
    const key = `guard_${randomUUID()}`;
    const tokens = [...conversation, ...o.profile.renderGenerationPrompt()];
    const started = performance.now();
    const observe = (result: GuardCall['result'], cachedTokens = 0, promptTokens = 0) =>
      o.observe?.({
        result,
        sentTokens: tokens.length,
        cachedTokens,
        promptTokens,
        seconds: (performance.now() - started) / 1000,
      });
    try {
      const completion = await o.worker.generate(
        {
          sessionKey: key,
          parentSessionKey: session?.key ?? '',
          cacheSalt: guardCacheSalt(tenant),
          prefixLen,
          tokens,
          model: o.model,
          sampling: { temperature: 0 },
          maxOutputTokens: o.maxOutputTokens,
          stopTokens: [...o.profile.stopTokens],
          // The verdict's format as a request constraint too: harmony prompts do not carry it.
          constraints: { toolChoice: '', responseFormatJson: VERDICT_FORMAT_JSON },
        },
        o.timeoutMs,
      );
      const stops = new Set(o.profile.stopTokens);
      const verdict = readVerdict(o.profile.decode(completion.tokens.filter((t) => !stops.has(t))));
      if (verdict === undefined && cutByContext(completion, o.maxOutputTokens)) {
        observe('context_full', completion.cachedTokens, completion.promptTokens);
        return 'context_full';
      }
      observe(verdict ?? 'unreadable', completion.cachedTokens, completion.promptTokens);
      const next = { key, prefixLen: prefixLen + conversation.length };
      return { verdict: verdict ?? 'unavailable', session: next };
    } catch (err) {
      if (DomainError.is(err, ErrorCode.prefixMiss)) {
        observe('prefix_miss');
        throw invalidSafetyState('the guard worker no longer holds its session', err);
      }
      if (DomainError.is(err, ErrorCode.contextLengthExceeded)) {
        observe('context_full');
        return 'context_full';
      }
      observe('unavailable');
      return { verdict: 'unavailable', session };
    }
  }
}

/** The verdict ended at the token limit before `maxOutputTokens`: the context window cut it. */
function cutByContext(completion: GuardCompletion, maxOutputTokens: number): boolean {
  return (
    completion.finishReason === inferenceV1.FinishReason.FINISH_REASON_LENGTH &&
    completion.tokens.length < maxOutputTokens
  );
}

const VERDICT_FORMAT_JSON = JSON.stringify({ type: 'json_schema', ...GUARD_RESPONSE_FORMAT, strict: true });

/**
 * The guard worker's `cache_salt` for a tenant: the guard's prompts carry the tenant's content, so
 * prefix reuse on its worker is scoped per tenant like the edge's, never shared across tenants.
 */
function guardCacheSalt(tenant: string): string {
  return createHash('sha256').update(`fastloop-guard-salt\u0000${tenant}`).digest('base64url').slice(0, 22);
}

function toEntry(item: safetyV1.SafetyItem): ConversationEntry {
  return { kind: 'message', role: 'user', text: `[${streamOf(item)}] ${item.text}` };
}

/** `unsafe` blocks, `safe` allows; anything else is no verdict (undefined). */
export function readVerdict(answer: string): 'allow' | 'block' | undefined {
  const word = readGuardVerdict(answer);
  return word === undefined ? undefined : word === 'unsafe' ? 'block' : 'allow';
}
