import type { Stack } from '@fastloop/launcher';
import { useStack } from './clients';
import { badInputSuite } from './errors.suite';
import { grpcAndBillingSuite } from './grpc-and-billing.suite';
import { httpLoopSuite } from './http-loop.suite';
import { safetySuite } from './safety.suite';
import { startTestStack } from './stack-fixture';
import { tenancySuite } from './tenancy.suite';
import { wsLoopSuite } from './ws-loop.suite';

// One real stack (five processes + a private redis-server) for every suite: starting it is the
// slow part, and the suites do not interfere (each conversation is its own).
let stack: Stack | undefined;

beforeAll(async () => {
  stack = await startTestStack();
  useStack(stack);
}, 300_000); // two starts (one retry) of up to the readiness budget each

afterAll(async () => {
  // The edge log is the first place to look when a suite fails.
  if (stack) process.stderr.write(`e2e stack logs: ${stack.logDir}\n`);
  await stack?.stop();
}, 60_000);

httpLoopSuite();
wsLoopSuite();
badInputSuite();
grpcAndBillingSuite();
safetySuite();
tenancySuite();
