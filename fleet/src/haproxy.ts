import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { spawnOwned, type OwnedProcess } from '@fastloop/service-kit';

/** One edge replica as HAProxy sees it: its traffic port and the admin port its /readyz is on. */
export interface EdgeBackend {
  readonly name: string;
  readonly port: number;
  readonly adminPort: number;
}

/** Options of {@link startHaproxy}. */
export interface HaproxyOptions {
  /** Folder for the configuration, the admin socket and the log. */
  readonly dir: string;
  /** The public port clients use. */
  readonly port: number;
  readonly edges: readonly EdgeBackend[];
  /** Health check interval; default 250 ms (a draining edge leaves the rotation within it). */
  readonly checkIntervalMs?: number;
}

/** A running HAProxy in front of the edges. */
export interface Haproxy {
  readonly url: string;
  readonly wsUrl: string;
  readonly process: OwnedProcess;
  /** `UP`, `DOWN`, `MAINT`… per server, from the admin socket. */
  serverStates(): Promise<Record<string, string>>;
  stop(): Promise<void>;
}

/** True when an `haproxy` binary is on PATH. */
export function haproxyInstalled(): boolean {
  return !spawnSync('haproxy', ['-v']).error;
}

/**
 * The configuration: what an Ingress/LoadBalancer in front of the edge pods must do for this API.
 * - WebSockets: `timeout tunnel` 1 h (an agent between turns is idle; EDGE_WS_MAX_CONNECTION_MS is
 *   60 min), `leastconn` because they are long-lived.
 * - Health: `GET /readyz` on each edge's admin port; a draining edge answers 503 at once and leaves
 *   the rotation within two intervals, its open WebSockets untouched (no `shutdown-sessions`): the
 *   edge finishes their turns and closes them with 1001 itself.
 * - Retries: a request or upgrade that reaches an edge as it starts draining gets 503 and is retried
 *   on the other one (`retry-on 503`, `option redispatch`), as is a refused connection.
 */
export function haproxyConfig(options: HaproxyOptions, socketPath: string): string {
  const inter = options.checkIntervalMs ?? 250;
  return `global
  maxconn 4000
  stats socket ${socketPath} mode 600 level admin
  log stdout format raw local0 notice

defaults
  mode http
  log global
  timeout connect 2s
  timeout client 120s
  timeout server 120s
  timeout tunnel 1h
  timeout http-keep-alive 10s
  option redispatch
  retries 3
  retry-on conn-failure empty-response 503

frontend api
  bind 127.0.0.1:${options.port}
  default_backend edges

backend edges
  balance leastconn
  option httpchk GET /readyz
  http-check expect status 200
  # Two failed checks take an edge out (a draining one answers 503 at once; one slow answer from a
  # busy one does not), two passed ones put it back; a check may take 1 s.
  timeout check 1s
  default-server inter ${inter} fastinter ${inter} downinter ${inter} fall 2 rise 2
${options.edges.map((e) => `  server ${e.name} 127.0.0.1:${e.port} check port ${e.adminPort}`).join('\n')}
`;
}

/** Starts HAProxy in the foreground (`-db`), owned by this process, and waits until it listens. */
export async function startHaproxy(options: HaproxyOptions): Promise<Haproxy> {
  const socketPath = join(options.dir, 'haproxy.sock');
  const configFile = join(options.dir, 'haproxy.cfg');
  writeFileSync(configFile, haproxyConfig(options, socketPath));
  const check = spawnSync('haproxy', ['-c', '-f', configFile], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`haproxy -c rejected the configuration:\n${check.stdout}${check.stderr}`);
  const proc = spawnOwned({
    name: 'haproxy',
    command: 'haproxy',
    args: ['-db', '-f', configFile],
    logFile: join(options.dir, 'haproxy.log'),
  });
  const admin = (command: string) => adminCommand(socketPath, command);
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (proc.exitInfo) throw new Error(`haproxy exited:\n${proc.tail(20).join('\n')}`);
    if (
      await admin('show info').then(
        () => true,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) throw new Error('haproxy did not open its admin socket');
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://127.0.0.1:${options.port}`,
    wsUrl: `ws://127.0.0.1:${options.port}/v1/responses`,
    process: proc,
    serverStates: async () => {
      // `show stat` CSV: pxname,svname,…,status (column 18).
      const csv = await admin('show stat');
      const header = csv.split('\n')[0].replace(/^# /, '').split(',');
      const [px, sv, st] = ['pxname', 'svname', 'status'].map((c) => header.indexOf(c));
      const states: Record<string, string> = {};
      for (const line of csv.split('\n').slice(1)) {
        const cols = line.split(',');
        if (cols[px] === 'edges' && cols[sv] !== 'BACKEND') states[cols[sv]] = cols[st];
      }
      return states;
    },
    // SIGTERM: HAProxy's hard stop (the test is over; nothing is left to finish).
    stop: async () => void (await proc.stop(5_000)),
  };
}

/** Sends one command to HAProxy's admin socket and resolves its whole answer. */
function adminCommand(socketPath: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let out = '';
    socket.setEncoding('utf8');
    socket.setTimeout(2_000, () => socket.destroy(new Error(`haproxy admin socket: '${command}' timed out`)));
    socket.on('connect', () => socket.end(`${command}\n`));
    socket.on('data', (chunk: string) => (out += chunk));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}
