import type { Stack } from '@fastloop/launcher';
import { useStack } from './clients';
import { startTestStack } from './stack-fixture';

/**
 * Gives the calling test file its own real stack (started in beforeAll, stopped in afterAll), so
 * every e2e file runs alone or with the others, in any order. Returns a getter for the stack.
 * `env` may be a function, read when the stack starts (after earlier `beforeAll`s, e.g. a process
 * the stack must point at).
 */
export function stackForThisFile(env: Record<string, string> | (() => Record<string, string>) = {}): () => Stack {
  let stack: Stack | undefined;
  beforeAll(async () => {
    stack = await startTestStack(typeof env === 'function' ? env() : env);
    useStack(stack);
  }, 300_000); // two starts (one retry) of up to the readiness budget each
  afterAll(async () => {
    useStack(undefined);
    // The service logs are the first place to look when a test fails.
    if (stack) process.stderr.write(`e2e stack logs: ${stack.logDir}\n`);
    await stack?.stop();
  }, 60_000);
  return () => {
    if (!stack) throw new Error('the stack is not running');
    return stack;
  };
}
