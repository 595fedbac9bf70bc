// The edge's own event loop under the CPU shapes of issue 17 (4 MB of spaces, 8 MB of `=`, a 1 MB
// random word, 1 MB of CJK, 1 MB of emoji, all five at once): the edge's event-loop lag
// (prom-client's nodejs_eventloop_lag_*, reset at each scrape) quiet and during each burst, and
// the latency of an edge-only request (bad JSON → 400) sent every 20 ms meanwhile by another tenant.
// Run: npx tsx bench/fairness/event-loop-lag.ts [--rounds N]   (prints one JSON line per round)
import { loadavg } from 'node:os';
import { startStack } from '@fastloop/launcher';
import { badJson, cpuShapes, postResponse, type Target } from '@fastloop/service-kit/testing';

async function lag(adminPort: number): Promise<{ maxMs: number; p99Ms: number }> {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const get = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)`, 'm').exec(text)?.[1]) * 1000;
  return { maxMs: get('nodejs_eventloop_lag_max_seconds'), p99Ms: get('nodejs_eventloop_lag_p99_seconds') };
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--rounds');
  const rounds = i >= 0 ? Number(process.argv[i + 1]) : 3;
  const env = { FASTLOOP_API_KEYS: 'sk-hostile:hostile,sk-neighbour:neighbour', EDGE_OUTPUT_MODERATION: 'false' };
  const stack = await startStack({ port: 0, logLevel: 'warn', env });
  const admin = stack.services.edge.ports.admin;
  const as = (apiKey: string): Target => ({ url: stack.url, wsUrl: stack.wsUrl, apiKey });
  try {
    const shapes = Object.values(cpuShapes());
    for (let round = 0; round < rounds; round++) {
      await lag(admin);
      await new Promise((r) => setTimeout(r, 1_000));
      const quiet = await lag(admin);
      const load = loadavg()[0];
      let done = false;
      const attack = Promise.all(
        shapes.map((input) => postResponse(as('sk-hostile'), { input, max_output_tokens: 16 })),
      ).finally(() => (done = true));
      const probes: number[] = [];
      while (!done) {
        probes.push((await badJson(as('sk-neighbour'))).ms);
        await new Promise((r) => setTimeout(r, 20));
      }
      const during = await lag(admin);
      probes.sort((a, b) => a - b);
      const outcomes = (await attack).map((o) => `${o.status}${o.code ? ` ${o.code}` : ''}`);
      const at = (q: number) => probes[Math.min(probes.length - 1, Math.floor(probes.length * q))];
      const ms = (n: number | undefined) => Number((n ?? Number.NaN).toFixed(1));
      console.log(
        JSON.stringify({
          round,
          load1m: ms(load),
          quietLagMaxMs: ms(quiet.maxMs),
          burstLagMaxMs: ms(during.maxMs),
          burstLagP99Ms: ms(during.p99Ms),
          badJson: { n: probes.length, p50Ms: ms(at(0.5)), p99Ms: ms(at(0.99)), maxMs: ms(probes.at(-1)) },
          hostile: outcomes,
        }),
      );
    }
  } finally {
    await stack.stop();
  }
}

void main();
