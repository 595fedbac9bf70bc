/**
 * `npm start`: runs the whole fastloop stack locally and prints how to talk to it. This is the one
 * CLI in the repository, so it writes to the console; the services themselves log JSON with pino.
 */
import { join, relative, resolve } from 'node:path';
import { describeWaiting, RedisDataDirInUseError, RedisNotInstalledError } from '@fastloop/service-kit';
import { reasoningKeyEnv } from './local-secrets';
import { renderBanner } from './banner';
import { formatLogLine } from './log-format';
import { modelStack, type ModelStack } from './model-option';
import { startStack, StackStartError, type Stack } from './stack';

const REPO_ROOT = join(__dirname, '..', '..');
/** npm and tsx each forward the terminal's Ctrl-C, so one press arrives up to three times within ms. */
const DUPLICATE_SIGNAL_MS = 1000;

const HELP = `Usage: npm start [-- options]

Starts safety, router, inference (simulated accelerator), billing and edge on this machine.

Options:
  --port <n>         public HTTP/WebSocket port (default: $PORT or 8080; 0 picks a free one)
  --log-level <lvl>  LOG_LEVEL for every service (default: $LOG_LEVEL or info)
  --quiet            write service logs only to the log folder, not to the terminal
  --log-dir <path>   folder for <service>.log files (default: .fastloop/logs)
  --private-redis    (the default now: the stack always starts its own redis-server unless REDIS_URL is set)
  --quiet            write service logs only to .fastloop/logs/<service>.log, not to the terminal
  --model <file>     serve a GGUF model with llama.cpp instead of the simulator (or $FASTLOOP_MODEL)
  --workers <n>      run n inference workers behind the router (or $FASTLOOP_WORKERS; default 1)
  -h, --help         show this help

Environment: REDIS_URL, FASTLOOP_API_KEYS, SIM_TOKENS_PER_SECOND, SIM_TTFT_MS, SIM_TOOL_CALLS,
SIM_PREFILL_TOKENS_PER_SECOND and BIND_HOST are passed on to the services.
`;

interface CliArgs {
  port?: number;
  logDir?: string;
  privateRedis: boolean;
  model?: string;
  workers?: number;
  logLevel?: string;
  quiet: boolean;
  help: boolean;
}

function parseArgs(argv: readonly string[]): CliArgs {
  const args: CliArgs = { quiet: false, help: false, privateRedis: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--port') args.port = Number(value());
    else if (arg === '--log-level') args.logLevel = value();
    else if (arg === '--log-dir') args.logDir = value();
    else if (arg === '--quiet') args.quiet = true;
    else if (arg === '--private-redis') args.privateRedis = true;
    else if (arg === '--model') args.model = value();
    else if (arg === '--workers') args.workers = Number(value());
    else if (arg === '-h' || arg === '--help') args.help = true;
    else throw new Error(`unknown option ${arg} (see --help)`);
  }
  return args;
}

const REDIS_SOURCES: Readonly<Record<string, string>> = {
  option: 'given',
  env: 'from REDIS_URL',
  local: "the stack's own, data in .fastloop/redis",
};

/**
 * Ctrl-C / SIGTERM / SIGHUP (the terminal closed) handling: the first stops cleanly, a later one (not
 * a forwarded echo) forces. If the launcher is killed outright, each service notices its parent is
 * gone and drains by itself (service-kit parent-watch), and the private Redis gets the kernel's
 * parent-death signal.
 */
function installSignals(getStack: () => Stack | undefined) {
  const aborter = new AbortController();
  let firstAt = 0;
  let requestStop: () => void = () => undefined;
  const stopRequested = new Promise<'stop'>((resolve) => (requestStop = () => resolve('stop')));
  const onSignal = () => {
    const now = Date.now();
    if (firstAt === 0) {
      firstAt = now;
      process.stdout.write('\nStopping fastloop (press Ctrl-C again to force)…\n');
      aborter.abort(); // a start in progress stops what it started and rejects with 'aborted'
      requestStop();
      return;
    }
    if (now - firstAt < DUPLICATE_SIGNAL_MS) return;
    process.stdout.write('Forcing stop.\n');
    getStack()?.kill();
    process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  return { signal: aborter.signal, stopRequested, stopping: () => firstAt !== 0 };
}

async function main(argv: readonly string[]): Promise<number> {
  let args: CliArgs;
  try {
    args = parseArgs(argv);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const colour = process.stdout.isTTY === true && !process.env.NO_COLOR;
  // A closed terminal turns every later write into EIO/EPIPE; stopping the stack matters more than telling it.
  process.stdout.on('error', () => undefined);
  process.stderr.on('error', () => undefined);
  const modelPath = args.model ?? (process.env.FASTLOOP_MODEL?.trim() || undefined);
  let model: ModelStack | undefined;
  let keys: Record<string, string>;
  try {
    // The catalog must say the context the worker will run with: the same LLAMACPP_CONTEXT_SIZE.
    const contextSize = Number(process.env.LLAMACPP_CONTEXT_SIZE?.trim() || 0);
    model = modelPath ? await modelStack(modelPath, join(REPO_ROOT, '.fastloop'), { contextSize }) : undefined;
    // Reasoning is sealed with this installation's own key, never the public development one.
    keys = reasoningKeyEnv(join(REPO_ROOT, '.fastloop'));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  let stack: Stack | undefined;
  const signals = installSignals(() => stack);
  const workerCount = args.workers ?? (process.env.FASTLOOP_WORKERS?.trim() ? Number(process.env.FASTLOOP_WORKERS) : 1);
  const inference = workerCount > 1 ? `${workerCount} inference workers` : 'inference';
  process.stdout.write(
    `Starting fastloop: safety, ${inference}, billing and the edge; the router once inference is ready …\n`,
  );
  try {
    stack = await startStack({
      port: args.port,
      workers: args.workers,
      logLevel: args.logLevel,
      // The stack's own Redis keeps its data here (append-only file): stored responses and ledgers survive a restart.
      redisDataDir: join(REPO_ROOT, '.fastloop', 'redis'),
      // A service that crashes now and then comes back; one that crash-loops ends the stack.
      restart: {},
      onRestart: (r) => {
        const how = r.exit.signal ? `was killed by ${r.exit.signal}` : `exited with code ${r.exit.code}`;
        process.stderr.write(
          `\n${r.service} ${how}; restarting it in ${r.delayMs} ms (restart ${r.attempt} within a minute)\n${r.logTail}\n`,
        );
      },
      onPortRace: (err) =>
        process.stderr.write(
          `\n${err.service} lost one of its ports to another process; starting again on new ports\n`,
        ),
      logDir: args.logDir ? resolve(args.logDir) : join(REPO_ROOT, '.fastloop', 'logs'),
      env: { ...keys, ...model?.env },
      signal: signals.signal,
      onWaiting: (service, waiting) =>
        process.stderr.write(
          `${service} is waiting for ${describeWaiting(waiting)}; it keeps retrying until the start gives up ` +
            `(FASTLOOP_READY_TIMEOUT_MS) or Ctrl-C\n`,
        ),
      onLogLine: args.quiet
        ? undefined
        : (service, line) => process.stdout.write(formatLogLine(service, line, { colour }) + '\n'),
    });
  } catch (err) {
    return reportStartFailure(err, colour);
  }
  if (!signals.stopping()) {
    process.stdout.write(
      renderBanner({
        ...stack,
        services: withWorkers(stack),
        redisSource: REDIS_SOURCES[stack.redisSource] ?? stack.redisSource,
        cwd: REPO_ROOT,
        model: model?.modelId,
      }),
    );
  }
  const outcome = await Promise.race([stack.crashed, signals.stopRequested]);
  if (outcome !== 'stop') {
    const how = outcome.exit.signal ? `was killed by ${outcome.exit.signal}` : `exited with code ${outcome.exit.code}`;
    const loop = outcome.crashes > 1 ? ` (${outcome.crashes} crashes within a minute)` : '';
    process.stderr.write(
      `\n${outcome.service} ${how}${loop}; stopping the rest.\n${showLog(outcome.service, outcome.logLines, outcome.logFile, colour)}`,
    );
  }
  const exits = await stack.stop();
  for (const [name, exit] of Object.entries(exits)) {
    if (exit.forced) process.stderr.write(`${name} did not stop in time and was killed\n`);
    else if (exit.code !== 0 && outcome === 'stop')
      process.stderr.write(`${name} exited with code ${exit.code ?? exit.signal} while stopping\n`);
  }
  if (outcome !== 'stop') return 1;
  process.stdout.write('fastloop stopped.\n');
  return 0;
}

/** The services for the banner, every inference worker listed after the first. */
function withWorkers(stack: Stack): Record<string, Stack['services'][keyof Stack['services']]> {
  const services: Record<string, Stack['services'][keyof Stack['services']]> = {};
  for (const [name, info] of Object.entries(stack.services)) {
    services[name] = info;
    if (name === 'inference') for (const w of stack.workers.slice(1)) services[w.instance] = w;
  }
  return services;
}

/** Prints why the start failed (expected failures readably, with the service's last lines) and returns the exit code. */
function reportStartFailure(err: unknown, colour: boolean): number {
  if (err instanceof StackStartError && err.code === 'aborted') return 0;
  if (err instanceof StackStartError) {
    const summary = err.message.split('\n')[0];
    process.stderr.write(
      `\nfastloop could not start: ${summary}\n${showLog(err.service, err.logLines, err.logFile, colour)}`,
    );
    return 1;
  }
  if (err instanceof RedisNotInstalledError || err instanceof RedisDataDirInUseError || err instanceof RangeError) {
    process.stderr.write(`\nfastloop could not start: ${err.message}\n`);
    return 1;
  }
  throw err;
}

/** A failed service's last lines, readable, and where the rest is. */
function showLog(
  service: string | undefined,
  lines: readonly string[],
  logFile: string | undefined,
  colour: boolean,
): string {
  if (!service || lines.length === 0) return '';
  const shown = lines.slice(-20).map((line) => formatLogLine(service, line, { colour }));
  return `${shown.join('\n')}\n${logFile ? `(full log: ${relative(process.cwd(), logFile)})\n` : ''}`;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(
      `fastloop launcher failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
