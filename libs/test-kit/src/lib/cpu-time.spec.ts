import { cpuMsOf, maxCpuMsBetweenTicks } from './cpu-time';

function spin(ms: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1_000 >= ms) return;
  }
}

describe('CPU-time bounds', () => {
  it('counts the CPU a piece of work spent, whatever else the machine does', () => {
    expect(cpuMsOf(() => spin(30))).toBeGreaterThanOrEqual(30);
  });

  it('finds the longest synchronous stretch between two event-loop turns', async () => {
    const blocked = await maxCpuMsBetweenTicks(async () => {
      await new Promise((r) => setTimeout(r, 5));
      spin(40);
      await new Promise((r) => setTimeout(r, 5));
    });
    expect(blocked).toBeGreaterThanOrEqual(40);
  });
});
