/**
 * For usage-outbox-crash.e2e.spec.ts: an edge-like process that enqueues usage records while Redis
 * is unreachable and then dies at once (SIGKILL, no shutdown), as a crashed edge would.
 * argv: <outbox root> <unreachable redis url> <records>
 */
import { billingV1 } from '@fastloop/proto';
import { createLogger } from '@fastloop/service-kit';
import { Registry } from 'prom-client';
import { UsageOutbox } from '../usage/usage-outbox';

const [dir, redisUrl, count] = process.argv.slice(2);
const outbox = new UsageOutbox({
  dir,
  redisUrl,
  registry: new Registry(),
  logger: createLogger({ service: 'crash-child', level: 'silent' }),
});
for (let i = 0; i < Number(count); i++) {
  outbox.enqueue(
    billingV1.UsageRecord.fromPartial({
      responseId: `resp_crash_${i}`,
      tenant: 'acme',
      model: 'm',
      inputTokens: 10,
      outputTokens: 1,
      completedAtMs: Date.UTC(2025, 0, 1),
    }),
  );
}
process.kill(process.pid, 'SIGKILL');
