#!/usr/bin/env node
// Bundles each service (apps/<svc>/src/main.ts) into one CommonJS file, <outdir>/<svc>.js, for the
// container image: no tsx, no TypeScript and no npm tree at runtime, and one file to parse at start.
//
//   node deploy/build-bundles.mjs                       # → dist/{edge,safety,router,inference,billing}.js
//   node deploy/build-bundles.mjs --outdir /tmp/b safety router
//
// Decisions (see deploy/README.md):
// - Third-party packages are bundled too (zod, pino, @grpc/grpc-js, ioredis, bullmq, gpt-tokenizer,
//   prom-client, ws, ...): all are plain JavaScript, so the image needs no node_modules at all
//   apart from the native add-ons below. A package that reads its own files at runtime would break
//   here; none of the ones the services load does (bullmq inlines its Lua and SQL scripts).
// - External (left as runtime require() calls):
//   - bufferutil, utf-8-validate: native add-ons that ws loads inside try/catch. Bundled, their
//     node-gyp-build(__dirname) lookup would miss the .node file and silently fall back to JS, so
//     they stay external and the image copies them (with node-gyp-build and their prebuilds).
//   - Optional peers nobody here uses (bullmq's `pg` and `@valkey/valkey-glide` backends): esbuild
//     leaves a require() it cannot resolve inside try/catch as a runtime call; they only load if
//     someone configures those backends. {@link OPTIONAL_PEERS} lists them, and the build fails if
//     any other package is left unresolved, so an upgrade that adds one is noticed here, not in
//     production.
// - tsconfig.base.json `paths` resolve @fastloop/* to the libs' sources, as tsx does in development.
// - Source maps are written beside each bundle; the image runs node with --enable-source-maps so
//   stack traces name the .ts files.
import { build } from 'esbuild';
import { mkdirSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Every deployable service; each one's entry is apps/<name>/src/main.ts. */
export const SERVICES = ['edge', 'safety', 'router', 'inference', 'billing'];

/** Native add-ons, kept external and copied into the image beside the bundles (see the header). */
export const NATIVE_EXTERNALS = ['bufferutil', 'utf-8-validate'];

/** Optional peers required inside try/catch and never installed: allowed to stay unresolved. */
export const OPTIONAL_PEERS = ['pg', '@valkey/valkey-glide'];

/**
 * Builds the bundles. Returns `{ service, file, bytes }` per service.
 * @param {{ outdir?: string, services?: string[], logLevel?: import('esbuild').LogLevel }} [options]
 */
export async function buildBundles(options = {}) {
  const outdir = resolve(options.outdir ?? join(repoRoot, 'dist'));
  const services = options.services?.length ? options.services : SERVICES;
  const unknown = services.filter((s) => !SERVICES.includes(s));
  if (unknown.length)
    throw new Error(`unknown service(s) ${unknown.join(', ')}; expected some of ${SERVICES.join(', ')}`);
  mkdirSync(outdir, { recursive: true });

  const result = await build({
    absWorkingDir: repoRoot,
    entryPoints: Object.fromEntries(services.map((s) => [s, join('apps', s, 'src', 'main.ts')])),
    outdir,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    // Resolves the @fastloop/* path aliases to libs/*/src, like tsx and ts-jest do.
    tsconfig: join(repoRoot, 'tsconfig.base.json'),
    external: NATIVE_EXTERNALS,
    sourcemap: 'linked',
    // Stack traces need the mappings only; leaving the sources out divides the maps' size by ~4.
    sourcesContent: false,
    // Whitespace and syntax only: identifiers keep their names for logs, errors and profiles.
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    // Licence headers of bundled packages go to <svc>.js.LEGAL.txt beside the bundle (the image keeps them).
    legalComments: 'linked',
    logLevel: options.logLevel ?? 'warning',
    metafile: true,
  });
  assertOnlyKnownExternals(result.metafile);

  return services.map((service) => {
    const file = join(outdir, `${service}.js`);
    return { service, file, bytes: statSync(file).size };
  });
}

/** Throws when a bundle leaves a package unresolved that is neither a builtin nor listed above. */
function assertOnlyKnownExternals(metafile) {
  const allowed = new Set([...NATIVE_EXTERNALS, ...OPTIONAL_PEERS]);
  const isBuiltin = (path) => path.startsWith('node:') || builtinModules.includes(path);
  for (const [file, output] of Object.entries(metafile.outputs)) {
    const unknown = output.imports
      .filter((i) => i.external && !isBuiltin(i.path) && !allowed.has(i.path))
      .map((i) => i.path);
    if (unknown.length) {
      throw new Error(
        `${file} leaves ${[...new Set(unknown)].join(', ')} to runtime require(): bundle it, or add it to NATIVE_EXTERNALS (and the image) or OPTIONAL_PEERS`,
      );
    }
  }
}

async function cli() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { outdir: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    console.log('usage: node deploy/build-bundles.mjs [--outdir DIR] [service ...]\nservices: ' + SERVICES.join(', '));
    return;
  }
  const results = await buildBundles({ outdir: values.outdir, services: positionals });
  for (const r of results)
    console.log(`${r.service.padEnd(10)} ${(r.bytes / 1024 / 1024).toFixed(1).padStart(6)} MiB  ${r.file}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  cli().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
