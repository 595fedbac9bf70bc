import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { spawnOwned, type OwnedProcess } from '@fastloop/service-kit';
import type { OciBundle } from './oci-bundle';

/** One container to start from the image: its CMD replaced by `cmd`, `env` added to the image's. */
export interface ContainerSpec {
  readonly name: string;
  readonly cmd: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/** Starts containers of one image on the host network, as Kubernetes would with the pod spec's hardening. */
export interface ContainerRunner {
  /** `chroot`: unshare + chroot of the unpacked bundle; `podman`: podman run. */
  readonly kind: 'chroot' | 'podman';
  /** The container's process, owned by the caller: `stop()` is SIGTERM to the service (then SIGKILL). */
  start(spec: ContainerSpec): OwnedProcess;
  /** Host pid of the service's own process (node), once it runs. */
  servicePid(container: OwnedProcess): number | undefined;
  /** Removes what the runner created outside its containers (podman storage). Idempotent. */
  close(): Promise<void>;
}

/** The folder the image lets its user write (an emptyDir in Kubernetes). */
const WRITABLE_DIR = '/app/.fastloop';

// Runs as root inside fresh mount and pid namespaces (unshare): the bundle's root filesystem is
// bind-mounted read-only (readOnlyRootFilesystem) with /dev, /proc, a /tmp and the writable folder
// on top; then chroot, drop to the image's user with no capabilities and no-new-privs
// (capabilities drop ALL, allowPrivilegeEscalation false), and exec the image's process with only
// the image's environment plus the container's: node is pid 1 of its namespace, as in a pod.
// The parent-death signal is set again after the uid change (which clears it), so the service dies
// with its unshare, which dies with its owner.
const CHROOT_SCRIPT = `set -eu
root=$1 uid=$2 gid=$3 cwd=$4 writable=$5; shift 5
mount --bind "$root" "$root"
mount --rbind /dev "$root/dev"
mount -t proc proc "$root/proc"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
mount -t tmpfs -o "uid=$uid,gid=$gid,mode=0750" tmpfs "$root$writable"
mount -o remount,bind,ro "$root"
exec chroot "$root" /usr/bin/setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all \\
  --bounding-set=-all --no-new-privs --pdeathsig=SIGKILL -- /usr/bin/env -i -C "$cwd" "$@"`;

/** The image's environment with the container's on top (same key: the container's wins, like `-e`). */
function mergedEnv(image: readonly string[], extra: Readonly<Record<string, string>>): string[] {
  const env = new Map(image.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  for (const [k, v] of Object.entries(extra)) env.set(k, v);
  return [...env].map(([k, v]) => `${k}=${v}`);
}

/**
 * The unshare + chroot runner: needs root, util-linux (unshare, setpriv) and coreutils' chroot on
 * the host, and the image's own /usr/bin/setpriv and /usr/bin/env.
 */
export function chrootRunner(bundle: OciBundle, entrypoint: readonly string[]): ContainerRunner {
  const p = bundle.process;
  return {
    kind: 'chroot',
    start: (spec) =>
      spawnOwned({
        name: spec.name,
        command: 'setpriv',
        args: [
          '--pdeathsig=SIGKILL',
          '--',
          'unshare',
          '--mount',
          '--pid',
          '--fork',
          '--kill-child=SIGKILL',
          '--',
          'sh',
          '-c',
          CHROOT_SCRIPT,
          'sh',
          bundle.rootfs,
          String(p.uid),
          String(p.gid),
          p.cwd,
          WRITABLE_DIR,
          ...mergedEnv(p.env, spec.env),
          ...entrypoint,
          ...spec.cmd,
        ],
        env: { PATH: process.env.PATH },
      }),
    // unshare forks the namespace's pid 1, which execs into the service.
    servicePid: (container) => childrenOf(container.pid)[0],
    close: async () => undefined,
  };
}

/** Why podman cannot run the image here, or undefined when a probe container ran. */
export function podmanProblem(podman: readonly string[], image: string): string | undefined {
  const probe = spawnSync(podman[0], [...podman.slice(1), 'run', '--rm', ...PODMAN_FLAGS, image, '--version'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (probe.error) return `podman: ${probe.error.message}`;
  if (probe.status !== 0) return (probe.stderr || probe.stdout).trim().split('\n').pop();
  return /^v\d+\./.test(probe.stdout.trim()) ? undefined : `unexpected probe output: ${probe.stdout.trim()}`;
}

/** podman flags of every container: host network, no cgroups of its own, the pod spec's hardening. */
const PODMAN_FLAGS = [
  '--network=host',
  '--cgroups=disabled',
  '--read-only',
  '--tmpfs=/tmp',
  // podman 4.3 takes no uid= for a tmpfs: world-writable (sticky) like an emptyDir without fsGroup.
  `--tmpfs=${WRITABLE_DIR}:rw,mode=1777`,
  '--cap-drop=ALL',
  '--security-opt=no-new-privileges',
];

/**
 * The podman runner: `podman run` per container with a private storage root (`podman` is the
 * command and its `--root/--runroot` flags), attached, so SIGTERM to it reaches the service
 * (--sig-proxy). close() removes every container of the run and the image from that storage.
 */
export function podmanRunner(podman: readonly string[], image: string, runId: string): ContainerRunner {
  const run = (args: string[]) => spawnSync(podman[0], [...podman.slice(1), ...args], { encoding: 'utf8' });
  return {
    kind: 'podman',
    start: (spec) =>
      spawnOwned({
        name: spec.name,
        command: podman[0],
        args: [
          ...podman.slice(1),
          'run',
          '--rm',
          `--name=${runId}-${spec.name}`,
          ...PODMAN_FLAGS,
          ...Object.entries(spec.env).map(([k, v]) => `--env=${k}=${v}`),
          image,
          ...spec.cmd,
        ],
        env: { PATH: process.env.PATH },
      }),
    servicePid: (container) => {
      const out = run(['inspect', '--format', '{{.State.Pid}}', `${runId}-${container.name}`]).stdout.trim();
      return Number(out) > 0 ? Number(out) : undefined;
    },
    close: async () => {
      run(['rm', '--force', '--all']);
    },
  };
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}
