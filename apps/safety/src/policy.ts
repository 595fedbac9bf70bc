import { createHash } from 'node:crypto';
import { z } from 'zod';
import { INJECTION_RULES } from './rules/injection-rules';
import { MAX_WINDOW, type Rule, type RuleCategory } from './rules/rule';
import { SECRET_RULES } from './rules/secret-rules';
import { encodedInjectionRule, encodedSecretRule } from './rules/encoded-rules';
import { normalise } from './rules/normalise';

/** What happens when a category's rule matches. */
export type Action = 'allow' | 'flag' | 'redact' | 'block';
export const ACTIONS = ['allow', 'flag', 'redact', 'block'] as const;
export const CATEGORIES = ['secret', 'injection', 'policy'] as const;

export type Actions = Readonly<Record<RuleCategory, Action>>;

/** Defaults: secrets and policy terms block; injection is flagged (it is scored, so it can misfire). */
export const DEFAULT_ACTIONS: Actions = Object.freeze({ secret: 'block', injection: 'flag', policy: 'block' });

/** A policy list for one tenant or one model (from `SAFETY_POLICIES`). */
export const policyListSchema = z
  .object({
    /** Literal terms (case-insensitive), matched across item and turn boundaries. */
    terms: z
      .array(
        z
          .string()
          .min(1)
          .max(MAX_WINDOW - 1),
      )
      .default([]),
    /** Regular expressions (case-insensitive), matched within each item. */
    regexes: z
      .array(
        z.string().refine((s) => {
          try {
            new RegExp(s, 'g');
            return true;
          } catch {
            return false;
          }
        }, 'not a valid regular expression'),
      )
      .default([]),
    actions: z.partialRecord(z.enum(CATEGORIES), z.enum(ACTIONS)).default({}),
    injectionThreshold: z.number().int().min(1).optional(),
    /** Also ask the policy (guard) model, when one is configured (`SAFETY_GUARD_ADDRESS`). */
    guard: z.boolean().optional(),
  })
  .strict();
export type PolicyList = z.infer<typeof policyListSchema>;

export const policiesSchema = z
  .object({
    tenants: z.record(z.string(), policyListSchema).default({}),
    models: z.record(z.string(), policyListSchema).default({}),
  })
  .strict();
export type Policies = z.infer<typeof policiesSchema>;

/** A per-item regex from a policy list. */
export interface ItemRegex {
  readonly id: string;
  readonly pattern: RegExp;
}

/** Everything one (tenant, model) pair is classified with. */
export interface CompiledPolicy {
  /** Windowed rules for every stream: secrets then policy terms. */
  readonly rules: readonly Rule[];
  /** Windowed rules for streams of text nobody in the conversation wrote (tool output, tool definitions). */
  readonly injectionRules: readonly Rule[];
  readonly itemRegexes: readonly ItemRegex[];
  readonly actions: Actions;
  readonly injectionThreshold: number;
  /** Ask the guard model too. */
  readonly guard: boolean;
  /** Identifies this policy in states: a state made under another policy is refused. */
  readonly hash: string;
}

export interface PolicyOptions {
  policies: Policies;
  defaultActions: Actions;
  injectionThreshold: number;
  /** Whether tenants and models without a `guard` setting ask the guard model (default false). */
  guardDefault?: boolean;
  /** Bumped by hand when a rule changes meaning without its source changing. */
  revision?: number;
  /** Rule sets (tests pass others). */
  secretRules?: readonly Rule[];
  injectionRules?: readonly Rule[];
}

/**
 * Resolves and caches the policy of a (tenant, model) pair. Only configured tenants and models
 * get their own entry, so the cache is bounded by the configuration.
 */
export class PolicyBook {
  private readonly cache = new Map<string, CompiledPolicy>();

  constructor(private readonly options: PolicyOptions) {}

  /** The policy for a request: the tenant's list and actions override the model's. */
  resolve(tenant: string, model: string): CompiledPolicy {
    const t = Object.hasOwn(this.options.policies.tenants, tenant) ? tenant : '';
    const m = Object.hasOwn(this.options.policies.models, model) ? model : '';
    const key = `${t}\u0000${m}`;
    let compiled = this.cache.get(key);
    if (!compiled) {
      compiled = this.compile(
        t ? this.options.policies.tenants[t] : undefined,
        m ? this.options.policies.models[m] : undefined,
      );
      this.cache.set(key, compiled);
    }
    return compiled;
  }

  private compile(tenant: PolicyList | undefined, model: PolicyList | undefined): CompiledPolicy {
    const o = this.options;
    const lists: [string, PolicyList | undefined][] = [
      ['model', model],
      ['tenant', tenant],
    ];
    const terms = lists.flatMap(([source, list]) =>
      (list?.terms ?? []).map((term, i) => termRule(`policy-term:${source}:${i}`, term)),
    );
    const itemRegexes = lists.flatMap(([source, list]) =>
      (list?.regexes ?? []).map((src, i) => ({ id: `policy-regex:${source}:${i}`, pattern: new RegExp(src, 'gi') })),
    );
    const actions: Actions = Object.freeze({ ...o.defaultActions, ...model?.actions, ...tenant?.actions });
    const injectionThreshold = tenant?.injectionThreshold ?? model?.injectionThreshold ?? o.injectionThreshold;
    const secretRules = o.secretRules ?? SECRET_RULES;
    const injection = o.injectionRules ?? INJECTION_RULES;
    const rules = [...secretRules, encodedSecretRule(secretRules), ...terms];
    const injectionRules = [...injection, encodedInjectionRule(injection)];
    const guard = tenant?.guard ?? model?.guard ?? o.guardDefault ?? false;
    const hash = hashPolicy(
      o.revision ?? 1,
      rules,
      injectionRules,
      itemRegexes,
      actions,
      injectionThreshold + (guard ? ':guard' : ''),
    );
    return { rules, injectionRules, itemRegexes, actions, injectionThreshold, guard, hash };
  }
}

/** A literal term, in the form the rules read (normalise.ts: a term with combining marks still matches). */
function termRule(id: string, literal: string): Rule {
  const term = normalise(literal).text || literal;
  const source = term.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return {
    id,
    category: 'policy',
    description: 'a term on the policy list',
    keywords: [term.toLowerCase()],
    pattern: new RegExp(source, 'gi'),
    window: term.length,
  };
}

function hashPolicy(
  revision: number,
  rules: readonly Rule[],
  injection: readonly Rule[],
  regexes: readonly ItemRegex[],
  actions: Actions,
  threshold: number | string,
): string {
  const h = createHash('sha256');
  h.update(`revision:${revision}\nthreshold:${threshold}\n${JSON.stringify(actions)}\n`);
  for (const r of [...rules, ...injection])
    h.update(`${r.id}/${r.pattern.source}/${r.pattern.flags}/${r.weight ?? 0}\n`);
  for (const r of regexes) h.update(`${r.id}/${r.pattern.source}\n`);
  return h.digest('base64url').slice(0, 16);
}
