// Compares the pooled `newId` with the naive one-`randomBytes`-per-id approach.
// Run: npx tsx bench/micro/new-id.bench.ts
import { randomBytes } from 'node:crypto';
import { newId } from '@fastloop/protocol';

const N = 1_000_000;

function time(label: string, fn: () => string): void {
  let sink = 0;
  for (let i = 0; i < 10_000; i++) sink += fn().length; // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) sink += fn().length;
  const ns = Number(process.hrtime.bigint() - start) / N;
  console.log(`${label.padEnd(24)} ${ns.toFixed(0)} ns/id (${sink > 0 ? 'ok' : ''})`);
}

time('randomBytes per id', () => `resp_${randomBytes(24).toString('hex')}`);
time('pooled newId', () => newId('resp'));
