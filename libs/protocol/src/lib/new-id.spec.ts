import { newId } from './new-id';

describe('newId', () => {
  it('mints the prefix, an underscore and 48 lowercase hex characters', () => {
    expect(newId('resp')).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(newId('call')).toMatch(/^call_[0-9a-f]{48}$/);
  });

  it('never repeats across refills of its entropy pool', () => {
    const ids = new Set(Array.from({ length: 2000 }, () => newId('msg')));
    expect(ids.size).toBe(2000);
  });
});
