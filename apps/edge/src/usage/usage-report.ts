import type { routerV1 } from '@fastloop/proto';
import { INTERNAL_TOKEN_METADATA } from '@fastloop/service-kit';
import { ApiError, type UsageCounters, type UsageList, type UsageRow } from '@fastloop/protocol';

export type { UsageCounters, UsageList, UsageRow } from '@fastloop/protocol';

/** What one report asks billing for; the tenant is already scoped by the caller's key. */
export interface UsageQuery {
  tenant?: string;
  model?: string;
  start: string;
  end: string;
}

/** A row of billing's internal report (`apps/billing` usage-report-server). */
interface LedgerRow {
  tenant: string;
  model: string;
  day: string;
  requests: number;
  input_tokens: number;
  cached_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
}

export interface UsageReporterOptions {
  /** Base URL of billing's internal report server (BILLING_URL). */
  billingUrl: string;
  /** FASTLOOP_INTERNAL_TOKEN, sent as `x-fastloop-internal-token` (billing refuses the report without it). */
  internalToken?: string;
  /** The router catalog (for prices); cached for `pricingTtlMs`. */
  listModels: () => Promise<routerV1.ListModelsResponse>;
  /** Deadline of the billing request; default 5000 ms. */
  timeoutMs?: number;
  /** How long catalog prices are reused; default 60 s. */
  pricingTtlMs?: number;
}

const ZERO_PRICE: routerV1.ModelPricing = {
  inputUsdPerMillion: 0,
  cachedInputUsdPerMillion: 0,
  outputUsdPerMillion: 0,
};

/**
 * Builds the public usage report: billing's per-day ledger rows, priced with the router catalog's
 * per-model prices. Billing's own port stays internal; only this (authenticated, tenant-scoped)
 * view reaches clients.
 */
export class UsageReporter {
  private prices?: { at: number; byModel: Map<string, routerV1.ModelPricing> };

  constructor(private readonly options: UsageReporterOptions) {}

  async report(query: UsageQuery): Promise<UsageList> {
    const [ledger, prices] = await Promise.all([this.ledger(query), this.pricing()]);
    const data = ledger.data.map((r) => toRow(r, prices.get(r.model) ?? ZERO_PRICE));
    return { object: 'list', data, totals: sum(data), start: query.start, end: query.end, has_more: ledger.truncated };
  }

  private async ledger(query: UsageQuery): Promise<{ data: LedgerRow[]; truncated: boolean }> {
    const url = new URL('/v1/usage', this.options.billingUrl);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
    let res: Response;
    try {
      res = await fetch(url, {
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 5_000),
        headers: this.options.internalToken ? { [INTERNAL_TOKEN_METADATA]: this.options.internalToken } : {},
      });
    } catch (cause) {
      throw usageUnavailable(cause);
    }
    if (!res.ok) throw usageUnavailable(new Error(`billing answered ${res.status}`));
    return (await res.json()) as { data: LedgerRow[]; truncated: boolean };
  }

  private async pricing(): Promise<Map<string, routerV1.ModelPricing>> {
    const ttl = this.options.pricingTtlMs ?? 60_000;
    if (this.prices && Date.now() - this.prices.at < ttl) return this.prices.byModel;
    try {
      const { models } = await this.options.listModels();
      const byModel = new Map(models.map((m) => [m.id, m.pricing ?? ZERO_PRICE]));
      this.prices = { at: Date.now(), byModel };
      return byModel;
    } catch (cause) {
      // Stale prices beat no report; without any, the report cannot be priced.
      if (this.prices) return this.prices.byModel;
      throw usageUnavailable(cause);
    }
  }
}

/** Price of a row in US dollars: uncached input, cached input and output at the model's rates. */
export function costUsd(
  r: Pick<LedgerRow, 'input_tokens' | 'cached_tokens' | 'output_tokens'>,
  p: routerV1.ModelPricing,
): number {
  const cached = Math.min(r.cached_tokens, r.input_tokens);
  const micro =
    (r.input_tokens - cached) * p.inputUsdPerMillion +
    cached * p.cachedInputUsdPerMillion +
    r.output_tokens * p.outputUsdPerMillion;
  return roundUsd(micro / 1_000_000);
}

function toRow(r: LedgerRow, price: routerV1.ModelPricing): UsageRow {
  return {
    tenant: r.tenant,
    model: r.model,
    date: r.day,
    responses: r.requests,
    input_tokens: r.input_tokens,
    cached_tokens: r.cached_tokens,
    output_tokens: r.output_tokens,
    reasoning_tokens: r.reasoning_tokens,
    cost_usd: costUsd(r, price),
  };
}

function sum(rows: readonly UsageRow[]): UsageCounters {
  const t: UsageCounters = {
    responses: 0,
    input_tokens: 0,
    cached_tokens: 0,
    output_tokens: 0,
    reasoning_tokens: 0,
    cost_usd: 0,
  };
  for (const r of rows) {
    t.responses += r.responses;
    t.input_tokens += r.input_tokens;
    t.cached_tokens += r.cached_tokens;
    t.output_tokens += r.output_tokens;
    t.reasoning_tokens += r.reasoning_tokens;
    t.cost_usd += r.cost_usd;
  }
  t.cost_usd = roundUsd(t.cost_usd);
  return t;
}

/** Micro-dollar precision: sums of rounded rows stay stable under float noise. */
function roundUsd(usd: number): number {
  return Math.round(usd * 1_000_000) / 1_000_000;
}

function usageUnavailable(cause: unknown): ApiError {
  return new ApiError({
    status: 503,
    type: 'service_unavailable_error',
    code: 'usage_unavailable',
    message: 'The usage ledger is unavailable. Please try again later.',
    cause,
  });
}
