import { TenantTurns } from './tenant-turns';

describe('TenantTurns, paced in scanning time per tenant', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const paced = (perSecond: number, burst: number) =>
    new TenantTurns({
      queueTimeoutMs: 60_000,
      maxQueuedPerTenant: 4,
      cpu: { perSecond, burst },
      now: () => Date.now(),
    });
  /** A slice that took `ms` of the thread. */
  const scan = (ms: number) => jest.setSystemTime(Date.now() + ms);

  it("charges each slice: a tenant in debt waits off the thread while another tenant's call runs", async () => {
    const turns = paced(100, 50);
    const order: string[] = [];
    const hostile = await turns.begin('h');
    scan(150); // 100 ms over its burst: ~1 s of waiting at 100 ms per second
    const resumed = hostile.pause().then(() => order.push('h resumed'));
    await jest.advanceTimersByTimeAsync(10);
    const neighbour = await turns.begin('n');
    order.push('n ran');
    scan(5);
    neighbour.end();
    await jest.advanceTimersByTimeAsync(900);
    expect(order).toEqual(['n ran']);
    await jest.advanceTimersByTimeAsync(200);
    await resumed;
    expect(order).toEqual(['n ran', 'h resumed']);
    hostile.end();
    // Its next call waits too: the debt is the tenant's, not the call's.
    scan(0);
    const next = turns.begin('h');
    let began = false;
    void next.then(() => (began = true));
    await jest.advanceTimersByTimeAsync(1);
    expect(began).toBe(false);
    await jest.advanceTimersByTimeAsync(2_000);
    (await next).end();
  });

  it('never waits within the burst, nor when unpaced', async () => {
    for (const turns of [paced(100, 1_000), paced(0, 1)]) {
      const call = await turns.begin('h');
      scan(500);
      let resumed = false;
      const pause = call.pause().then(() => (resumed = true));
      await jest.advanceTimersByTimeAsync(0);
      expect(resumed).toBe(true);
      await pause;
      call.end();
      call.end(); // idempotent: the classifier ends a turn when its rules are done, and again at the end
    }
  });

  it('counts calls waiting for credit in the per-tenant queue bound', async () => {
    const turns = paced(1, 1);
    const first = await turns.begin('h');
    scan(1_000);
    first.end(); // ~1,000 s of debt
    const waiting = [turns.begin('h'), turns.begin('h'), turns.begin('h'), turns.begin('h')];
    await expect(turns.begin('h')).rejects.toMatchObject({ code: 'safety_overloaded' });
    turns.close();
    void Promise.allSettled(waiting);
  });
});
