/**
 * The CPU time (user + system, ms) this process spent while `work` ran. Tests that guard against a
 * blow-up (quadratic work, regex backtracking) bound this rather than wall time: other processes on
 * a loaded machine stretch the wall clock, not the CPU this work costs.
 */
export function cpuMsOf(work: () => void): number {
  const start = process.cpuUsage();
  work();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1_000;
}

/**
 * Runs `work` and returns the most CPU time (ms) the process spent between two consecutive turns
 * of its event loop: how long the loop was blocked, measured in CPU rather than wall time, so a
 * loaded machine (which stretches the wall clock between turns) cannot fail a test that bounds it.
 */
export async function maxCpuMsBetweenTicks(work: () => Promise<void>): Promise<number> {
  let last = process.cpuUsage();
  let max = 0;
  const timer = setInterval(() => {
    const used = process.cpuUsage(last);
    last = process.cpuUsage();
    max = Math.max(max, (used.user + used.system) / 1_000);
  }, 1);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  const used = process.cpuUsage(last);
  return Math.max(max, (used.user + used.system) / 1_000);
}
