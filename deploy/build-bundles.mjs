#!/usr/bin/env node
// Bundles each service (apps/<svc>/src/main.ts) into one CommonJS file, <outdir>/<svc>.js, for the
// container image: no tsx, no TypeScript and no npm tree at runtime, and one file to parse at start.
//
//   node deploy/build-bundles.mjs                       # → dist/{edge,safety,router,inference,billing}.js
//   node deploy/build-bundles.mjs --outdir /tmp/b safety router
//   node deploy/build-bundles.mjs --stage /tmp/app      # → /tmp/app/dist/*.js + /tmp/app/node_modules (the image's /app)
//
// Decisions (see deploy/README.md):
// - Third-party packages are bundled too (zod, pino, @grpc/grpc-js, ioredis, bullmq, gpt-tokenizer,
//   prom-client, ws, ...): all are plain JavaScript, so the image needs no node_modules at all
//   apart from the native add-ons below. A package that reads its own files at runtime would break
//   here; none of the ones the services load does (bullmq inlines its Lua and SQL scripts).
// - External (left as runtime require()/import() calls), in {@link RUNTIME_EXTERNALS}, and installed
//   beside the bundles with their own dependencies (`--stage`: <dir>/node_modules; the Dockerfile and
//   deploy/image/build.sh both use it, so the image has one list of externals):
//   - bufferutil, utf-8-validate: native add-ons that ws loads inside try/catch. Bundled, their
//     node-gyp-build(__dirname) lookup would miss the .node file and silently fall back to JS.
//   - node-llama-cpp (the llamacpp engine and GGUF profiles, loaded by a lazy import()): ESM with a
//     top-level await, a native add-on, and an import() per platform binary package, none of which
//     a CommonJS bundle can hold. Only the linux-x64 CPU binary package is installed (the image is
//     linux/amd64; the GPU packages are 100+ MB each, see shared/TOOLCHAIN.md); its other platform
//     packages stay unresolved import()s that node-llama-cpp catches at run time.
// - Optional peers nobody here uses (bullmq's `pg` and `@valkey/valkey-glide` backends): esbuild
//   leaves a require() it cannot resolve inside try/catch as a runtime call; they only load if
//   someone configures those backends. {@link OPTIONAL_PEERS} lists them, and the build fails if
//   any other package is left unresolved, so an upgrade that adds one is noticed here, not in
//   production.
// - tsconfig.base.json `paths` resolve @fastloop/* to the libs' sources, as tsx does in development.
// - Source maps are written beside each bundle; the image runs node with --enable-source-maps so
//   stack traces name the .ts files.
import { build } from 'esbuild';
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Every deployable service; each one's entry is apps/<name>/src/main.ts. */
export const SERVICES = ['edge', 'safety', 'router', 'inference', 'billing'];

/**
 * Packages the bundles load at run time instead of holding them (see the header): the image installs
 * each with its dependencies under /app/node_modules. The one list of externals for every image build.
 */
export const RUNTIME_EXTERNALS = ['bufferutil', 'utf-8-validate', 'node-llama-cpp', '@node-llama-cpp/linux-x64'];

/**
 * Worker-thread scripts bundled beside a service, named as the service loads them: the edge's render
 * pool starts `edge-render-worker.js` from the folder of `edge.js` (apps/edge/src/render-pool).
 */
export const WORKER_ENTRIES = { edge: { 'edge-render-worker': 'apps/edge/src/render-pool/render-worker.ts' } };

/** node-llama-cpp's platform binary packages: left unresolved, except the one in {@link RUNTIME_EXTERNALS}. */
const PLATFORM_BINARIES = '@node-llama-cpp/*';

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
    entryPoints: Object.fromEntries(
      services.flatMap((s) => [[s, join('apps', s, 'src', 'main.ts')], ...Object.entries(WORKER_ENTRIES[s] ?? {})]),
    ),
    outdir,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'cjs',
    // Resolves the @fastloop/* path aliases to libs/*/src, like tsx and ts-jest do.
    tsconfig: join(repoRoot, 'tsconfig.base.json'),
    external: [...RUNTIME_EXTERNALS, PLATFORM_BINARIES],
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

/**
 * Files of {@link RUNTIME_EXTERNALS} that the image leaves out: type declarations, source maps, and
 * node-llama-cpp's 34 MB git bundle of llama.cpp, which only building from source reads (the engine
 * runs the prebuilt binary with `build: 'never'`; the image has no compiler anyway).
 */
const STAGE_SKIP = [/\.d\.[cm]?ts$/, /\.map$/, /(^|\/)node-llama-cpp\/llama\/gitRelease\.bundle$/];

/**
 * Copies {@link RUNTIME_EXTERNALS} and every package they depend on (`dependencies`, resolved the way
 * Node resolves them) from this checkout's node_modules into `targetDir`, keeping nested
 * node_modules where npm put them, so `require`/`import` from the bundles finds the same files.
 * Returns the copied package folders, relative to node_modules.
 * @param {string} targetDir e.g. `<stage>/node_modules`, the image's /app/node_modules
 * @param {{ from?: string }} [options] the node_modules to copy from (default: this checkout's)
 */
export function stageRuntimeModules(targetDir, options = {}) {
  const from = resolve(options.from ?? join(repoRoot, 'node_modules'));
  const root = dirname(from);
  const copied = new Set();
  const visit = (name, requiredFrom) => {
    const dir = resolvePackageDir(name, requiredFrom, root);
    if (!dir)
      throw new Error(
        `${name} (needed by ${relative(root, requiredFrom) || 'the bundles'}) is not installed: run npm ci`,
      );
    const rel = relative(from, dir);
    if (copied.has(rel)) return;
    copied.add(rel);
    cpSync(realpathSync(dir), join(targetDir, rel), {
      recursive: true,
      dereference: true,
      // Nested node_modules are visited as packages of their own, so only what is needed is copied.
      filter: (src) => {
        const inner = relative(realpathSync(dir), src).split(sep).join('/');
        if (inner.startsWith('node_modules')) return false;
        const path = `${rel.split(sep).join('/')}/${inner}`;
        return !STAGE_SKIP.some((re) => re.test(path));
      },
    });
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    for (const dep of Object.keys(manifest.dependencies ?? {})) visit(dep, dir);
  };
  rmSync(targetDir, { recursive: true, force: true });
  mkdirSync(targetDir, { recursive: true });
  for (const name of RUNTIME_EXTERNALS) visit(name, root);
  return [...copied].sort();
}

/** Node's lookup: `<dir>/node_modules/<name>`, then each parent folder's, up to (and including) `root`. */
function resolvePackageDir(name, fromDir, root) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === root || dirname(dir) === dir) return undefined;
  }
}

/** Throws when a bundle leaves a package unresolved that is neither a builtin nor listed above. */
function assertOnlyKnownExternals(metafile) {
  const allowed = new Set([...RUNTIME_EXTERNALS, ...OPTIONAL_PEERS]);
  const isBuiltin = (path) => path.startsWith('node:') || builtinModules.includes(path);
  const isPlatformBinary = (path) => path.startsWith(PLATFORM_BINARIES.slice(0, -1));
  for (const [file, output] of Object.entries(metafile.outputs)) {
    const unknown = output.imports
      .filter((i) => i.external && !isBuiltin(i.path) && !allowed.has(i.path) && !isPlatformBinary(i.path))
      .map((i) => i.path);
    if (unknown.length) {
      throw new Error(
        `${file} leaves ${[...new Set(unknown)].join(', ')} to runtime require(): bundle it, or add it to RUNTIME_EXTERNALS or OPTIONAL_PEERS`,
      );
    }
  }
}

async function cli() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      outdir: { type: 'string' },
      stage: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(
      'usage: node deploy/build-bundles.mjs [--outdir DIR | --stage DIR] [service ...]\n' +
        '  --outdir DIR  bundles only (default dist/)\n' +
        "  --stage DIR   the image's /app: DIR/dist (bundles) and DIR/node_modules (the runtime externals)\n" +
        'services: ' +
        SERVICES.join(', '),
    );
    return;
  }
  if (values.stage && values.outdir) throw new Error('--stage and --outdir exclude each other');
  const outdir = values.stage ? join(values.stage, 'dist') : values.outdir;
  if (values.stage) rmSync(outdir, { recursive: true, force: true });
  const results = await buildBundles({ outdir, services: positionals });
  for (const r of results)
    console.log(`${r.service.padEnd(10)} ${(r.bytes / 1024 / 1024).toFixed(1).padStart(6)} MiB  ${r.file}`);
  if (values.stage) {
    const packages = stageRuntimeModules(join(values.stage, 'node_modules'));
    console.log(`externals  ${packages.length} packages in ${join(values.stage, 'node_modules')}`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  cli().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
