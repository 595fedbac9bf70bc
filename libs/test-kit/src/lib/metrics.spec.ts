import { Counter, Registry } from 'prom-client';
import { MetricsText, registryMetricValue } from './metrics';

const page = `# HELP errors_total Errors
# TYPE errors_total counter
# HELP turns_total Turns
# TYPE turns_total counter
turns_total{transport="websocket",status="completed"} 3
turns_total{transport="sse",status="completed"} 2
# TYPE stage_seconds histogram
stage_seconds_sum{stage="render"} 0.5
stage_seconds_count{stage="render"} 4
`;

describe('MetricsText', () => {
  it('sums the samples whose labels include the asked ones', () => {
    const m = new MetricsText(page);
    expect(m.value('turns_total')).toBe(5);
    expect(m.value('turns_total', { transport: 'sse' })).toBe(2);
    expect(m.value('stage_seconds_count', { stage: 'render' })).toBe(4);
  });

  it('reads a declared metric without samples as 0', () => {
    expect(new MetricsText(page).value('errors_total')).toBe(0);
  });

  it('throws for a metric the page does not declare (a renamed metric cannot read as 0)', () => {
    expect(() => new MetricsText(page).value('error_total')).toThrow(/metric error_total is not on this page/);
  });
});

describe('registryMetricValue', () => {
  it('sums matching series and throws for a metric that is not registered', async () => {
    const registry = new Registry();
    const c = new Counter({ name: 'calls_total', help: 'h', labelNames: ['outcome'], registers: [registry] });
    c.inc({ outcome: 'ok' }, 2);
    c.inc({ outcome: 'failed' });
    expect(await registryMetricValue(registry, 'calls_total')).toBe(3);
    expect(await registryMetricValue(registry, 'calls_total', { outcome: 'failed' })).toBe(1);
    expect(await registryMetricValue(registry, 'calls_total', { outcome: 'cancelled' })).toBe(0);
    await expect(registryMetricValue(registry, 'call_total')).rejects.toThrow(/call_total is not registered/);
  });
});
