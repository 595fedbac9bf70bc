import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The run-time configuration of an image as the Dockerfile's last stage declares it. deploy/image/build.sh
 * gives the mmdebstrap-built image exactly this configuration, so the Dockerfile stays the one
 * description of how the image runs, whichever way it is built.
 */
export interface RuntimeConfig {
  readonly env: Readonly<Record<string, string>>;
  readonly workdir: string;
  /** `uid:gid`, numeric (Kubernetes' runAsNonRoot needs a numeric user). */
  readonly user: string;
  readonly exposedPorts: readonly string[];
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
}

/** The repository's Dockerfile. */
export const DOCKERFILE = join(__dirname, '..', 'Dockerfile');

/**
 * Reads ENV, WORKDIR, USER, EXPOSE, ENTRYPOINT and CMD of the Dockerfile's last stage. Supports the
 * forms this repository uses (JSON-array ENTRYPOINT/CMD, `ENV k=v ...` with line continuations,
 * unquoted values) and throws on anything else, rather than building an image that runs differently.
 */
export function runtimeConfig(dockerfile: string): RuntimeConfig {
  const instructions = logicalLines(dockerfile);
  const lastFrom = instructions.map((i) => i.keyword).lastIndexOf('FROM');
  if (lastFrom < 0) throw new Error('Dockerfile has no FROM');
  const env: Record<string, string> = {};
  let workdir = '/';
  let user: string | undefined;
  const exposedPorts: string[] = [];
  let entrypoint: string[] | undefined;
  let cmd: string[] | undefined;
  for (const { keyword, args } of instructions.slice(lastFrom + 1)) {
    switch (keyword) {
      case 'ENV':
        for (const pair of args.split(/\s+/).filter(Boolean)) {
          const eq = pair.indexOf('=');
          if (eq <= 0 || /["'$]/.test(pair)) throw new Error(`unsupported ENV form: ${pair}`);
          env[pair.slice(0, eq)] = pair.slice(eq + 1);
        }
        break;
      case 'WORKDIR':
        workdir = args.startsWith('/') ? args : join(workdir, args);
        break;
      case 'USER':
        if (!/^\d+(:\d+)?$/.test(args)) throw new Error(`USER must be numeric uid[:gid], got ${args}`);
        user = args;
        break;
      case 'EXPOSE':
        for (const p of args.split(/\s+/)) exposedPorts.push(p.includes('/') ? p : `${p}/tcp`);
        break;
      case 'ENTRYPOINT':
        entrypoint = jsonArray(keyword, args);
        break;
      case 'CMD':
        cmd = jsonArray(keyword, args);
        break;
    }
  }
  if (!user || !entrypoint || !cmd) throw new Error('the last stage must set USER, ENTRYPOINT and CMD');
  return { env, workdir, user, exposedPorts, entrypoint, cmd };
}

/** The `umoci config` flags that give an OCI image {@link RuntimeConfig}. */
export function umociConfigArgs(config: RuntimeConfig): string[] {
  return [
    `--config.user=${config.user}`,
    `--config.workingdir=${config.workdir}`,
    ...Object.entries(config.env).map(([k, v]) => `--config.env=${k}=${v}`),
    ...config.exposedPorts.map((p) => `--config.exposedports=${p}`),
    ...config.entrypoint.map((a) => `--config.entrypoint=${a}`),
    ...config.cmd.map((a) => `--config.cmd=${a}`),
  ];
}

/** Instructions with continuation lines joined and comments dropped. */
function logicalLines(text: string): { keyword: string; args: string }[] {
  const out: { keyword: string; args: string }[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (line === '' && pending === '')) continue;
    pending += (pending ? ' ' : '') + line.replace(/\\$/, '').trim();
    if (line.endsWith('\\')) continue;
    const m = /^(\w+)\s+(.*)$/.exec(pending);
    if (m) out.push({ keyword: m[1].toUpperCase(), args: m[2].trim() });
    pending = '';
  }
  return out;
}

function jsonArray(keyword: string, args: string): string[] {
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string'))
    throw new Error(`${keyword} must be a JSON array of strings (exec form), got ${args}`);
  return parsed;
}

// `tsx deploy/image/dockerfile-config.ts --umoci-args`: NUL-separated flags for build.sh.
if (require.main === module) {
  const args = umociConfigArgs(runtimeConfig(readFileSync(DOCKERFILE, 'utf8')));
  process.stdout.write(args.map((a) => `${a}\0`).join(''));
}
