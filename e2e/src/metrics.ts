import type { Stack } from '@fastloop/launcher';
import { MetricsText } from '@fastloop/test-kit';

/** One scrape of a service's Prometheus /metrics; `value()` throws for a metric the page lacks. */
export class MetricsScrape extends MetricsText {
  /** Scrapes the edge (or another service) of `stack`. */
  static async of(stack: Stack, service: keyof Stack['services'] = 'edge'): Promise<MetricsScrape> {
    const res = await fetch(`http://127.0.0.1:${stack.services[service].ports.admin}/metrics`);
    if (!res.ok) throw new Error(`GET /metrics of ${service}: HTTP ${res.status}`);
    return new MetricsScrape(await res.text());
  }
}
