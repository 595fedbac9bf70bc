import { createLogger } from '@fastloop/service-kit';
import { slowClientGuard } from './slow-client';

describe('slowClientGuard', () => {
  it('lets writes through up to the bound, then cuts the client once and refuses every later write', () => {
    let cuts = 0;
    const fast = slowClientGuard({
      maxBufferedBytes: 100,
      logger: createLogger({ service: 'edge-test', level: 'silent' }),
      cut: () => cuts++,
    });
    expect(fast(0)).toBe(true);
    expect(fast(100)).toBe(true);
    expect(cuts).toBe(0);
    expect(fast(101)).toBe(false);
    expect(cuts).toBe(1);
    expect(fast(0)).toBe(false); // cut for good, even once the buffer has drained
    expect(cuts).toBe(1);
  });
});
