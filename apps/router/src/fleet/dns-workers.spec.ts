import { createLogger } from '@fastloop/service-kit';
import { startFakeDnsServer, type FakeDnsServer } from '@fastloop/service-kit/testing';
import type { WorkerSpec } from '../workers';
import { DnsWorkers, parseDnsTarget } from './dns-workers';

const logger = createLogger({ service: 'router-test', level: 'silent' });

describe('DnsWorkers', () => {
  let dns: FakeDnsServer;
  beforeEach(async () => (dns = await startFakeDnsServer()));
  afterEach(async () => dns.close());

  function watch(target = 'inference.fastloop.svc:50053'): { source: DnsWorkers; lists: (readonly WorkerSpec[])[] } {
    const lists: (readonly WorkerSpec[])[] = [];
    const source = new DnsWorkers({
      target,
      intervalMs: 60_000,
      servers: [dns.address],
      logger,
      onChange: (w) => lists.push(w),
    });
    return { source, lists };
  }

  it('lists one worker per A record of the name, at the given port, and follows changes', async () => {
    dns.setRecords('inference.fastloop.svc', ['10.0.0.2', '10.0.0.1']);
    const { source, lists } = watch();
    try {
      await source.start();
      expect(lists).toEqual([
        [
          { id: '10.0.0.1:50053', address: '10.0.0.1:50053' },
          { id: '10.0.0.2:50053', address: '10.0.0.2:50053' },
        ],
      ]);
      await source.resolveOnce(); // unchanged: no new list
      expect(lists).toHaveLength(1);
      dns.setRecords('inference.fastloop.svc', ['10.0.0.1', '10.0.0.2', '10.0.0.3']);
      await source.resolveOnce();
      expect(lists.at(-1)!.map((w) => w.id)).toEqual(['10.0.0.1:50053', '10.0.0.2:50053', '10.0.0.3:50053']);
      dns.setRecords('inference.fastloop.svc', []); // no ready pods: NXDOMAIN
      await source.resolveOnce();
      expect(lists.at(-1)).toEqual([]);
    } finally {
      source.close();
    }
  });

  it('keeps the last list when the DNS server does not answer', async () => {
    dns.setRecords('inference.fastloop.svc', ['10.0.0.1']);
    const { source, lists } = watch();
    try {
      await source.start();
      await dns.close();
      await source.resolveOnce();
      expect(lists).toHaveLength(1);
    } finally {
      source.close();
      dns = await startFakeDnsServer(); // for afterEach
    }
  }, 20_000);

  it('names INFERENCE_WORKERS_DNS when the target is not name:port', () => {
    expect(parseDnsTarget('inference.svc:50053')).toEqual({ name: 'inference.svc', port: 50053 });
    expect(() => parseDnsTarget('inference.svc')).toThrow(/INFERENCE_WORKERS_DNS 'inference.svc'/);
    expect(() => parseDnsTarget('x:0')).toThrow(/INFERENCE_WORKERS_DNS/);
  });
});
