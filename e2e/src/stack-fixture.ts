import { startStack, type Stack } from '@fastloop/launcher';
import { serviceEntries } from './service-entries';

/**
 * Starts one real stack for a test file: five processes on free ports and a private redis-server
 * (or REDIS_URL). A fast simulated accelerator keeps the suite quick; behaviour, not speed, is tested.
 */
export function startTestStack(env: Record<string, string> = {}): Promise<Stack> {
  // startStack itself starts again when a service loses a picked port to another process (the
  // suite runs stacks side by side); any other failure is real and fails the file.
  return startStack({
    entries: serviceEntries(),
    port: 0,
    privateRedis: !process.env.REDIS_URL,
    logLevel: 'warn',
    onPortRace: (err) => process.stderr.write(`e2e: ${err.message.split('\n')[0]}; starting again on new ports\n`),
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
