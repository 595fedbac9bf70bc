/**
 * The options of this process that its worker threads take too: how modules load (`--import tsx`,
 * `--require`, `--conditions`, loaders), source maps and warnings. Node refuses per-process
 * options in a worker's `execArgv` (`ERR_WORKER_INVALID_EXEC_ARGV`: `--expose-gc`, `--inspect`,
 * heap sizes), so a service started with one of them (the benchmarks pass `--expose-gc`) would fail
 * to start its pool if it handed its own flags on as they are.
 */
export function workerExecArgv(execArgv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i];
    const [name, inline] = splitFlag(arg);
    if (WITH_VALUE.has(name)) {
      if (inline !== undefined) out.push(arg);
      else if (i + 1 < execArgv.length) out.push(arg, execArgv[++i]);
    } else if (ALONE.has(name) || name.startsWith('--experimental-') || name.startsWith('--no-warnings')) {
      out.push(arg);
    }
  }
  return out;
}

/** Module-loading flags that take a value (`--import tsx` or `--import=tsx`). */
const WITH_VALUE = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader', '--conditions', '-C']);
const ALONE = new Set(['--enable-source-maps', '--no-deprecation', '--trace-warnings', '--trace-uncaught']);

function splitFlag(arg: string): [string, string | undefined] {
  const eq = arg.indexOf('=');
  return eq < 0 ? [arg, undefined] : [arg.slice(0, eq), arg.slice(eq + 1)];
}
