import { startTestStack } from './stack-fixture';

/** Starts one real stack for the whole e2e run; tests read where it is from the environment. */
export default async function globalSetup(): Promise<void> {
  const stack = await startTestStack();
  (globalThis as { __FASTLOOP_STACK__?: unknown }).__FASTLOOP_STACK__ = stack;
  process.env.FASTLOOP_E2E_URL = stack.url;
  process.env.FASTLOOP_E2E_WS_URL = stack.wsUrl;
  process.env.FASTLOOP_E2E_GRPC = stack.grpcAddress;
  process.env.FASTLOOP_E2E_KEY = stack.apiKey;
  process.env.FASTLOOP_E2E_REDIS = stack.redisUrl;
  process.env.FASTLOOP_E2E_LOGS = stack.logDir;
  process.env.FASTLOOP_E2E_BILLING_HTTP = String(stack.services.billing.ports.http ?? '');
}
