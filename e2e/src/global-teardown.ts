import type { Stack } from '../../tools/launcher/stack';

export default async function globalTeardown(): Promise<void> {
  const stack = (globalThis as { __FASTLOOP_STACK__?: Stack }).__FASTLOOP_STACK__;
  await stack?.stop();
}
