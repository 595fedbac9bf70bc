import pino from 'pino';
import { watchEngineHealth } from './engine-health';

const logger = pino({ level: 'silent' });

describe('watchEngineHealth', () => {
  it('reports SERVING while the upstream answers and NOT_SERVING while it does not', async () => {
    const answers = [true, false, true];
    const states: boolean[] = [];
    const stop = await watchEngineHealth({
      engine: { name: 'openai-compatible', checkHealth: async () => answers.shift() ?? true },
      setServing: (s) => states.push(s),
      intervalMs: 20,
      logger,
    });
    // Three checks, however long the machine takes to run them (no fixed sleep).
    while (states.length < 3) await new Promise((r) => setTimeout(r, 10));
    stop();
    expect(states.slice(0, 3)).toEqual([true, false, true]);
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
