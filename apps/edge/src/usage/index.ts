/** Usage producer: hands each response's usage to billing over the `fastloop-usage` BullMQ queue. */
export { UsageOutbox, type UsageOutboxOptions } from './usage-outbox';
export { usageOutboxConfigShape, usageOutboxOptionsFromConfig } from './usage-outbox-config';
export { USAGE_JOB_NAME, USAGE_JOB_OPTIONS, USAGE_QUEUE_NAME } from './usage-job';
export { UsageReporter, costUsd, type UsageList, type UsageRow, type UsageQuery } from './usage-report';
