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
