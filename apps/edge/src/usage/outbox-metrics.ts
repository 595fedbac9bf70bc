import { Counter, Gauge, type Registry } from 'prom-client';

/** Why the outbox gave up on records (each is logged at error level too). */
export type DropReason = 'invalid_record' | 'corrupt_spill_line' | 'spill_write_failed';

/** The usage outbox's series. */
export interface OutboxMetrics {
  /** Records Redis accepted (fresh or replayed from the spill file). */
  enqueued: Counter;
  /** Records whose delivery round failed or was deferred (Redis not connected, timeout, error). */
  retried: Counter;
  /** Records written to the spill file. */
  spilled: Counter;
  /** Spilled records read back and accepted by Redis (also counted in `enqueued`). */
  replayed: Counter;
  /** Records given up on, by `reason`. */
  dropped: Counter<'reason'>;
  /** Records held in memory right now (buffered + being sent). */
  buffered: Gauge;
}

/**
 * Registers the outbox series on `registry`, or reuses them when an earlier outbox registered
 * them there (one process may replace its outbox, e.g. in tests).
 */
export function createOutboxMetrics(registry: Registry): OutboxMetrics {
  const counter = <L extends string>(name: string, help: string, labelNames: L[] = []) =>
    (registry.getSingleMetric(name) as Counter<L> | undefined) ??
    new Counter<L>({ name, help, labelNames, registers: [registry] });
  const gaugeName = 'fastloop_usage_outbox_buffered';
  return {
    enqueued: counter('fastloop_usage_outbox_enqueued_total', 'Usage records accepted by the Redis queue.'),
    retried: counter(
      'fastloop_usage_outbox_retried_total',
      'Usage records whose delivery round failed or was deferred; they are retried.',
    ),
    spilled: counter('fastloop_usage_outbox_spilled_total', 'Usage records written to the outbox spill file.'),
    replayed: counter('fastloop_usage_outbox_replayed_total', 'Spilled usage records read back and accepted by Redis.'),
    dropped: counter('fastloop_usage_outbox_dropped_total', 'Usage records given up on, by reason.', ['reason']),
    buffered:
      (registry.getSingleMetric(gaugeName) as Gauge | undefined) ??
      new Gauge({ name: gaugeName, help: 'Usage records held in memory by the outbox.', registers: [registry] }),
  };
}
