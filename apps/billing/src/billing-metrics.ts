import { Counter, Histogram, type Registry } from 'prom-client';

/** The billing worker's own series (the registry adds default Node metrics and `service`). */
export interface BillingMetrics {
  /** Records added to the ledger. */
  applied: Counter;
  /** Jobs whose response id was applied already (redelivery, duplicate job), skipped. */
  duplicates: Counter;
  /** Failed job attempts by `reason`: `invalid` (never retried) or `redis` (retried with backoff). */
  failures: Counter<'reason'>;
  /** Seconds one ledger step (the Lua script round trip) took. */
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
      help: 'Usage jobs skipped because their response id was applied already.',
      registers: [registry],
    }),
    failures: new Counter({
      name: 'fastloop_billing_job_failures_total',
      help: 'Failed usage job attempts, by reason (invalid: not retried; redis: retried).',
      labelNames: ['reason'],
      registers: [registry],
    }),
    applySeconds: new Histogram({
      name: 'fastloop_billing_ledger_apply_seconds',
      help: 'Latency of one atomic ledger step.',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
  };
}
