import { isAbsolute, join, resolve } from 'node:path';

/** The five services, as the launcher names them. */
type Service = 'edge' | 'safety' | 'router' | 'inference' | 'billing';

const repoRoot = resolve(__dirname, '../..');

/**
 * Where the suite's global setup wrote this run's service bundles (e2e/src/global-setup.ts), or
 * undefined when the services run from their TypeScript sources (FASTLOOP_E2E_FROM_SOURCE=1).
 */
export const BUNDLE_DIR_ENV = 'FASTLOOP_E2E_SERVICE_BUNDLES';

/**
 * The entry file a test starts `service` from: the bundle the image ships (deploy/build-bundles.mjs),
 * built fresh for this run, or the TypeScript source under tsx. Bundles start in about two thirds
 * of the time on two cores (6.7 s against 10.6–10.9 s for an idle stack), which the suite pays ~35 times.
 */
export function serviceEntry(service: Service): string {
  const dir = process.env[BUNDLE_DIR_ENV];
  if (!dir) return join(repoRoot, 'apps', service, 'src', 'main.ts');
  return isAbsolute(dir) ? join(dir, `${service}.js`) : join(repoRoot, dir, `${service}.js`);
}

/** {@link serviceEntry} for every service, as `startStack({ entries })` takes them. */
export function serviceEntries(): Record<Service, string> {
  const all: Service[] = ['edge', 'safety', 'router', 'inference', 'billing'];
  return Object.fromEntries(all.map((s) => [s, serviceEntry(s)])) as Record<Service, string>;
}
