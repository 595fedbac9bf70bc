/**
 * What the gRPC bidi session costs the edge per turn with and without event batches
 * (`x-fastloop-event-batch: true`): the session service with the in-process fake backends
 * (apps/edge/src/testing/fake-deps.ts), a client in another process running turns one after the
 * other on one stream; CPU time of this process only. The two modes alternate, so a loaded
 * machine weighs on both alike.
 *
 *   npx tsx apps/edge/bench/grpc-batch.bench.ts [--turns N] [--rounds N]   (default 200 × 6)
 *
 * Measured (2 shared cores, load average 11, Node 24), a fake turn of 9 events: one message each
 * 1,003–1,108 µs per turn, batched 6 messages and 873–920 µs (≈ 45–60 µs per message saved).
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { Metadata } from '@grpc/grpc-js';
import { responsesV1 } from '@fastloop/proto';
import { createGrpcClient, startGrpcServer } from '@fastloop/service-kit';
import { ApiKeyAuth } from '../src/auth';
import { EVENT_BATCH_HEADER, responsesGrpcService } from '../src/grpc/responses-grpc';
import { StateCacheBudget } from '../src/session/state-cache';
import { fakeDeps } from '../src/testing/fake-deps';

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};

/** The client process: on each `{batched, turns}` message, runs that many turns on a new stream. */
function client(address: string): void {
  const grpc = createGrpcClient(responsesV1.ResponsesServiceClient, address);
  process.on('message', (m: { batched: boolean; turns: number }) => {
    const md = new Metadata();
    md.set('authorization', 'Bearer sk-bench');
    if (m.batched) md.set(EVENT_BATCH_HEADER, 'true');
    const call = grpc.session(md);
    let done = 0;
    let messages = 0;
    const create = () =>
      call.write({
        eventJson: JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'hi', store: false }),
      });
    call.on('data', (msg: responsesV1.SessionResponse) => {
      messages++;
      if ((msg.more.at(-1) ?? msg).type !== 'response.completed') return;
      if (++done < m.turns) return create();
      call.end();
      process.send!({ messages });
    });
    call.on('error', () => undefined);
    create();
  });
  process.on('disconnect', () => grpc.close());
}

async function main(): Promise<void> {
  const turns = arg('turns', 200);
  const rounds = arg('rounds', 6);
  const { deps } = fakeDeps();
  const binding = responsesGrpcService({
    deps,
    auth: new ApiKeyAuth('sk-bench:t1'),
    budget: new StateCacheBudget(1 << 30),
    connectionCacheBytes: 1 << 26,
    maxQueued: 4,
    maxBufferedBytes: 1 << 24,
    maxPayloadBytes: 1 << 20,
  });
  const server = await startGrpcServer({ port: 0, services: [binding], logger: deps.logger });
  const child = fork(__filename, ['--client', `127.0.0.1:${server.port}`], { execArgv: ['--import', 'tsx'] });
  const cpu = { false: [] as number[], true: [] as number[] };
  let messages = { false: 0, true: 0 };
  for (let r = 0; r <= rounds; r++) {
    for (const batched of [false, true]) {
      const start = process.cpuUsage();
      child.send({ batched, turns });
      const [reply] = (await once(child, 'message')) as [{ messages: number }];
      const used = process.cpuUsage(start);
      if (r === 0) continue; // warm-up
      cpu[`${batched}`].push((used.user + used.system) / turns);
      messages = { ...messages, [`${batched}`]: reply.messages / turns };
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const batched of [false, true])
    process.stdout.write(
      `${batched ? 'batched  ' : 'one each '}: ${messages[`${batched}`].toFixed(1)} messages a turn, edge CPU ${median(cpu[`${batched}`]).toFixed(0)} µs per turn (median of ${rounds} rounds × ${turns} turns)\n`,
    );
  child.disconnect();
  await server.close(100);
}

if (process.argv.includes('--client')) client(process.argv[process.argv.indexOf('--client') + 1]);
else
  main().catch((err: unknown) => {
    process.stderr.write(`grpc-batch bench failed: ${String(err)}\n`);
    process.exit(1);
  });
