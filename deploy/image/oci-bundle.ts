import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** What an OCI runtime would start: the `process` of the runtime bundle umoci unpacks from the image. */
export interface BundleProcess {
  readonly args: readonly string[];
  readonly env: readonly string[];
  readonly cwd: string;
  readonly uid: number;
  readonly gid: number;
}

/** An image unpacked as an OCI runtime bundle: `rootfs/` and the process its configuration describes. */
export interface OciBundle {
  readonly dir: string;
  readonly rootfs: string;
  readonly process: BundleProcess;
  /** The image reference inside the archive (`org.opencontainers.image.ref.name`). */
  readonly tag: string;
  /** The image configuration's ENTRYPOINT (a container that replaces CMD keeps it). */
  readonly entrypoint: readonly string[];
}

/**
 * Unpacks an oci-archive (a tar of an OCI image layout, as deploy/image/build.sh writes it) into
 * `workDir` with umoci, which applies the layers and turns the image configuration (ENV, WORKDIR,
 * USER, ENTRYPOINT + CMD) into a runtime bundle's config.json, as a container runtime would.
 */
export function unpackOciArchive(archive: string, workDir: string): OciBundle {
  const layout = join(workDir, 'layout');
  const dir = join(workDir, 'bundle');
  mkdirSync(layout, { recursive: true });
  run('tar', ['-xf', archive, '-C', layout]);
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as {
    manifests: { digest: string; annotations?: Record<string, string> }[];
  };
  const tag = index.manifests[0]?.annotations?.['org.opencontainers.image.ref.name'];
  if (!tag) throw new Error(`${archive} names no image (index.json has no ref.name)`);
  const blob = (digest: string) => JSON.parse(readFileSync(join(layout, 'blobs', ...digest.split(':')), 'utf8'));
  const manifest = blob(index.manifests[0].digest) as { config: { digest: string } };
  const image = blob(manifest.config.digest) as { config?: { Entrypoint?: string[] } };
  run('umoci', ['unpack', '--image', `${layout}:${tag}`, dir]);
  const spec = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as {
    process: { args: string[]; env: string[]; cwd: string; user: { uid: number; gid: number } };
  };
  const { args, env, cwd, user } = spec.process;
  return {
    dir,
    rootfs: join(dir, 'rootfs'),
    tag,
    entrypoint: image.config?.Entrypoint ?? [],
    process: { args, env, cwd, uid: user.uid, gid: user.gid },
  };
}

/** Bytes under `dir` (apparent size, like `du -sb`). */
export function treeBytes(dir: string): number {
  const out = run('du', ['-sb', dir]);
  return Number(out.split('\t')[0]);
}

/** Size of one file. */
export function fileBytes(file: string): number {
  return statSync(file).size;
}

function run(command: string, args: string[]): string {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  if (r.error) throw new Error(`${command}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${r.status}): ${r.stderr.trim()}`);
  return r.stdout;
}
