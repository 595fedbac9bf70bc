import { Counter, Histogram, type Registry } from 'prom-client';

/** The billing worker's own series (the registry adds default Node metrics and `service`). */
export interface BillingMetrics {
  /** Records added to the ledger. */
  applied: Counter;
  /** Records whose response id was applied already (redelivery, duplicate job), skipped. */
  duplicates: Counter;
  /**
   * Failed job attempts by `reason`: `redis` (retried with backoff), or `invalid`: never retried,
   * counted once per invalid record of a batch (the rest of it applied) or per job whose data is no job.
   */
  failures: Counter<'reason'>;
  /** Seconds one job's ledger step (its records' Lua scripts, pipelined per tenant) took. */
  applySeconds: Histogram;
}

/** Registers the billing metrics on `registry`. Call once per registry. */
export function createBillingMetrics(registry: Registry): BillingMetrics {
  return {
    applied: new Counter({
      name: 'fastloop_billing_jobs_applied_total',
      help: 'Usage records applied to the ledger.',
      registers: [registry],
    }),
    duplicates: new Counter({
      name: 'fastloop_billing_jobs_duplicate_total',
      help: 'Usage records skipped because their response id was applied already.',
      registers: [registry],
    }),
    failures: new Counter({
      name: 'fastloop_billing_job_failures_total',
      help: 'Failed usage job attempts by reason (redis: retried), and invalid records or jobs (invalid: not retried).',
      labelNames: ['reason'],
      registers: [registry],
    }),
    applySeconds: new Histogram({
      name: 'fastloop_billing_ledger_apply_seconds',
      help: "Latency of one job's ledger step (one pipelined round trip per tenant).",
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
  };
}
