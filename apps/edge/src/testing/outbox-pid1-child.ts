/**
 * For usage-outbox-container.e2e.spec.ts: an edge-like process run as pid 1 of its own pid
 * namespace, as an edge in a container is. `crash`: enqueues usage records while Redis is
 * unreachable, says `ready`, and waits to be SIGKILLed (from outside the namespace: pid 1 ignores
 * its own signals). `deliver`: starts an outbox on the same folder with a live Redis (adopting and
 * replaying what it finds), says how many files it adopted, and waits.
 * argv: <crash|deliver> <outbox root> <redis url> <records>
 */
import { billingV1 } from '@fastloop/proto';
import { createLogger } from '@fastloop/service-kit';
import { Registry } from 'prom-client';
import { UsageOutbox } from '../usage/usage-outbox';

const [mode, dir, redisUrl, count] = process.argv.slice(2);
const outbox = new UsageOutbox({
  dir,
  redisUrl,
  registry: new Registry(),
  logger: createLogger({ service: 'pid1-child', level: 'silent' }),
});
if (mode === 'crash')
  for (let i = 0; i < Number(count); i++)
    outbox.enqueue(
      billingV1.UsageRecord.fromPartial({
        responseId: `resp_pid1_${i}`,
        tenant: 'acme',
        model: 'm',
        inputTokens: 10,
        outputTokens: 1,
        completedAtMs: Date.UTC(2025, 0, 1),
      }),
    );
// The WAL is written with write(2) as records are enqueued; fdatasync follows within 5 ms.
setTimeout(() => process.stdout.write(`ready pid=${process.pid}\n`), 50);
setInterval(() => undefined, 1_000);
