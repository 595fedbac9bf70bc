import pino from 'pino';
import { Dependencies } from '@fastloop/service-kit';
import { watchEngineHealth } from './engine-health';

const logger = pino({ level: 'silent' });

describe('watchEngineHealth', () => {
  it('reports SERVING while the upstream answers and NOT_SERVING while it does not', async () => {
    const answers = [true, false, true];
    const states: boolean[] = [];
    const upstream = new Dependencies(logger).track('engine upstream', 'http://vllm:8000');
    const seen: boolean[] = [];
    const stop = await watchEngineHealth({
      engine: {
        name: 'openai-compatible',
        checkHealth: async () => {
          const healthy = answers.shift() ?? true;
          return healthy ? { healthy } : { healthy, reason: 'ECONNREFUSED' };
        },
      },
      setServing: (s) => {
        states.push(s);
        seen.push(upstream.isUp);
      },
      upstream,
      intervalMs: 20,
      logger,
    });
    // Three checks, however long the machine takes to run them (no fixed sleep).
    while (states.length < 3) await new Promise((r) => setTimeout(r, 10));
    stop();
    expect(states.slice(0, 3)).toEqual([true, false, true]);
    // The dependency follows the upstream, so /readyz says why while it is away.
    expect(seen.slice(0, 3)).toEqual([true, false, true]);
  });

  it('keeps an engine without a health check SERVING', async () => {
    const states: boolean[] = [];
    const stop = await watchEngineHealth({
      engine: { name: 'sim' },
      setServing: (s) => states.push(s),
      intervalMs: 10,
      logger,
    });
    stop();
    expect(states).toEqual([true]);
  });
});
