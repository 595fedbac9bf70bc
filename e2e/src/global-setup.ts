import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BUNDLE_DIR_ENV } from './service-entries';

const repoRoot = resolve(__dirname, '../..');

/**
 * Builds this run's service bundles (deploy/build-bundles.mjs, as the image does) into a folder of
 * its own inside the checkout, where the runtime externals (node-llama-cpp) resolve from its
 * node_modules. Fresh every run, never shared with another: a stale bundle must not stand in for
 * the sources. FASTLOOP_E2E_FROM_SOURCE=1 runs the services from TypeScript under tsx instead.
 */
export default function globalSetup(): void {
  if (process.env.FASTLOOP_E2E_FROM_SOURCE === '1') {
    delete process.env[BUNDLE_DIR_ENV];
    return;
  }
  mkdirSync(join(repoRoot, 'dist'), { recursive: true });
  const dir = mkdtempSync(join(repoRoot, 'dist', 'e2e-services-'));
  const run = spawnSync(process.execPath, [join(repoRoot, 'deploy/build-bundles.mjs'), '--outdir', dir], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  if (run.status !== 0)
    throw new Error(`e2e: building the service bundles failed (${run.status}):\n${run.stdout}\n${run.stderr}`);
  process.env[BUNDLE_DIR_ENV] = dir;
}
