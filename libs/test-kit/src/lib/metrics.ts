import type { Registry } from 'prom-client';

/**
 * One Prometheus text page (a service's /metrics), with a lookup by name and labels. A metric the
 * page does not declare (no `# TYPE` line: renamed, removed, never registered) throws rather than
 * reading as 0, so a check such as "errors == 0" cannot pass because the metric is gone. A declared
 * metric with no series matching the labels is 0: a labelled counter that never counted.
 */
export class MetricsText {
  private readonly samples: string[];
  private readonly declared = new Set<string>();

  constructor(text: string) {
    const lines = text.split('\n');
    for (const l of lines) {
      const m = /^# TYPE (\S+) (\S+)/.exec(l);
      if (!m) continue;
      this.declared.add(m[1]);
      if (m[2] === 'histogram' || m[2] === 'summary')
        for (const suffix of ['_sum', '_count', '_bucket']) this.declared.add(m[1] + suffix);
    }
    this.samples = lines.filter((l) => l && !l.startsWith('#'));
  }

  /** The sum of every sample of `name` whose labels include `labels`; throws if `name` is not declared. */
  value(name: string, labels: Record<string, string> = {}): number {
    if (!this.declared.has(name))
      throw new Error(`metric ${name} is not on this page (declared: ${[...this.declared].sort().join(', ')})`);
    let sum = 0;
    for (const line of this.samples) {
      const brace = line.indexOf('{');
      const sampleName = brace >= 0 ? line.slice(0, brace) : line.split(' ')[0];
      if (sampleName !== name) continue;
      if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return sum;
  }
}

/**
 * The sum of the series of counter or gauge `name` in `registry` whose labels include `labels`;
 * throws when `registry` has no metric of that name (0 only for a registered metric without a
 * matching series).
 */
export async function registryMetricValue(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`metric ${name} is not registered`);
  const { values } = await metric.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, val]) => String(v.labels[k]) === val))
    .reduce((sum, v) => sum + v.value, 0);
}
