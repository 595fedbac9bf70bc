import { startStack, type Stack } from '@fastloop/launcher';
import { serviceEntries } from './service-entries';

/**
 * Starts one real stack for a test file: five processes on free ports and a private redis-server
 * (or REDIS_URL). A fast simulated accelerator keeps the suite quick; behaviour, not speed, is tested.
 */
export async function startTestStack(env: Record<string, string> = {}): Promise<Stack> {
  try {
    return await startOnce(env);
  } catch (err) {
    // Internal ports are picked free-then-bound, which can race with another process on a busy
    // machine; one more start (new ports) tells a race from a real failure, which fails again.
    process.stderr.write(
      `e2e: stack did not start, retrying once: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    return startOnce(env);
  }
}

function startOnce(env: Record<string, string>): Promise<Stack> {
  return startStack({
    entries: serviceEntries(),
    port: 0,
    privateRedis: !process.env.REDIS_URL,
    logLevel: 'warn',
    env: {
      SIM_TTFT_MS: '5',
      SIM_TOKENS_PER_SECOND: '20000',
      SIM_TOOL_CALLS: '2',
      FASTLOOP_API_KEYS: 'sk-e2e-test:e2e-tenant,sk-e2e-other:e2e-other',
      FASTLOOP_ADMIN_API_KEYS: 'sk-e2e-admin:e2e-ops',
      ...env,
    },
  });
}

/** A weather tool whose schema the simulated model's arguments must satisfy. */
export const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather for a city',
  strict: true,
  parameters: {
    type: 'object',
    properties: {
      city: { type: 'string', description: 'City name' },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      days: { type: 'integer' },
    },
    required: ['city', 'unit'],
    additionalProperties: false,
  },
};
