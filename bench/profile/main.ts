/**
 * Reads V8 CPU profiles of the services (FASTLOOP_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR
 * --cpu-prof-interval=2000" before a benchmark: one .cpuprofile per process). See README.md.
 *
 *   npx tsx bench/profile/main.ts which DIR                      which service each profile is
 *   npx tsx bench/profile/main.ts busy FILE                      busy ms in each second
 *   npx tsx bench/profile/main.ts top FILE [--from S] [--to S] [--n N]
 *   npx tsx bench/profile/main.ts packages FILE [--from S] [--to S]
 *   npx tsx bench/profile/main.ts callers FILE REGEX [--from S] [--to S] [--depth N]
 *   npx tsx bench/profile/main.ts compare A B --units-a N --units-b M [--from-a S --to-a S --from-b S --to-b S]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { byPackage, compareWindows, ProfileSamples, top } from './cpu-profile';

const out = (line: string) => process.stdout.write(`${line}\n`);
const ms = (v: number) => v.toFixed(1).padStart(9);
const pct = (v: number, all: number) => `${((100 * v) / all).toFixed(1).padStart(5)}%`;

function flag(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
}

function main(argv: string[]): void {
  const [command, ...args] = argv;
  const from = flag(args, 'from', 0);
  const to = flag(args, 'to', Infinity);
  switch (command) {
    case 'which':
      for (const name of readdirSync(args[0]).filter((f) => f.endsWith('.cpuprofile'))) {
        const text = readFileSync(join(args[0], name), 'utf8');
        // tsx runs apps/<service>/src/main.ts; FASTLOOP_SERVICE_BUNDLES=dist runs dist/<service>.js.
        const service = /apps\/([a-z-]+)\/src\/main\.ts/.exec(text) ?? /\/dist\/([a-z-]+)\.js"/.exec(text);
        out(`${name}  ${service?.[1] ?? '?'}`);
      }
      return;
    case 'busy':
      out(
        ProfileSamples.read(args[0])
          .busyPerSecond()
          .map((v) => Math.round(v))
          .join(' '),
      );
      return;
    case 'top': {
      const w = ProfileSamples.read(args[0]).window(from, to);
      const n = flag(args, 'n', 40);
      out(`busy ${ms(w.busyMs)} ms`);
      for (const [title, map] of [
        ['self', w.self],
        ['inclusive', w.inclusive],
      ] as const) {
        out(`-- ${title}`);
        for (const [key, v] of top(map, n)) out(`${ms(v)} ms ${pct(v, w.busyMs)}  ${key}`);
      }
      return;
    }
    case 'packages': {
      const w = ProfileSamples.read(args[0]).window(from, to);
      for (const [key, v] of top(byPackage(w.self), flag(args, 'n', 40)))
        out(`${ms(v)} ms ${pct(v, w.busyMs)}  ${key}`);
      return;
    }
    case 'callers': {
      const callers = ProfileSamples.read(args[0]).callers(new RegExp(args[1]), from, to, flag(args, 'depth', 6));
      for (const [key, v] of top(callers, flag(args, 'n', 25))) out(`${ms(v)} ms  ${key}`);
      return;
    }
    case 'compare': {
      const [a, b] = [args[0], args[1]].map((f) => ProfileSamples.read(f));
      const wa = a.window(flag(args, 'from-a', 0), flag(args, 'to-a', Infinity));
      const wb = b.window(flag(args, 'from-b', 0), flag(args, 'to-b', Infinity));
      const [ua, ub] = [flag(args, 'units-a', 1), flag(args, 'units-b', 1)];
      out(`busy per unit: A ${(wa.busyMs / ua).toFixed(3)} ms, B ${(wb.busyMs / ub).toFixed(3)} ms`);
      for (const [title, ma, mb] of [
        ['inclusive', wa.inclusive, wb.inclusive],
        ['self', wa.self, wb.self],
      ] as const) {
        out(`-- ${title}: largest increases B − A (µs per unit)`);
        for (const r of compareWindows(ma, ua, mb, ub).slice(0, flag(args, 'n', 30)))
          out(
            `${(r.delta * 1000).toFixed(0).padStart(7)}  A ${(r.a * 1000).toFixed(0).padStart(6)}  B ${(r.b * 1000).toFixed(0).padStart(6)}  ${r.key}`,
          );
      }
      return;
    }
    default:
      out(readFileSync(__filename, 'utf8').split('*/')[0]);
      process.exitCode = command === undefined || command === '--help' ? 0 : 1;
  }
}

// Piped into `head`: stop quietly when the reader has gone.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});
main(process.argv.slice(2));
