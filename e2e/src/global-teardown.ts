import { rmSync } from 'node:fs';
import { BUNDLE_DIR_ENV } from './service-entries';

/** Removes the bundles global-setup.ts built for this run. */
export default function globalTeardown(): void {
  const dir = process.env[BUNDLE_DIR_ENV];
  if (dir) rmSync(dir, { recursive: true, force: true });
}
