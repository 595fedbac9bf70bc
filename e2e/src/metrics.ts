import type { Stack } from '@fastloop/launcher';

/** One scrape of a service's Prometheus /metrics, with a lookup by name and labels. */
export class MetricsScrape {
  private constructor(private readonly lines: string[]) {}

  /** Scrapes the edge (or another service) of `stack`. */
  static async of(stack: Stack, service: keyof Stack['services'] = 'edge'): Promise<MetricsScrape> {
    const text = await (await fetch(`http://127.0.0.1:${stack.services[service].ports.admin}/metrics`)).text();
    return new MetricsScrape(text.split('\n').filter((l) => l && !l.startsWith('#')));
  }

  /** The sum of every sample of `name` whose labels include `labels` (0 when none). */
  value(name: string, labels: Record<string, string> = {}): number {
    let sum = 0;
    for (const line of this.lines) {
      const brace = line.indexOf('{');
      const sampleName = brace >= 0 ? line.slice(0, brace) : line.split(' ')[0];
      if (sampleName !== name) continue;
      if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return sum;
  }
}
