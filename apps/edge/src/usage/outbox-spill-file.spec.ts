import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { billingV1 } from '@fastloop/proto';
import fc from 'fast-check';
import { OutboxSpillFile } from './outbox-spill-file';

const recordArb = fc.record({
  responseId: fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }).map((s) => `resp_${s.replace(/:/g, '_')}`),
  tenant: fc.string({ maxLength: 30, unit: 'grapheme' }),
  model: fc.string({ maxLength: 30 }),
  inputTokens: fc.nat(),
  cachedTokens: fc.nat(),
  outputTokens: fc.nat(),
  reasoningTokens: fc.nat(),
  completedAtMs: fc.nat(2 ** 45),
  transport: fc.constantFrom('http', 'sse', 'websocket', 'grpc'),
  status: fc.constantFrom('completed', 'failed', 'incomplete', 'cancelled'),
});

async function readAll(spill: OutboxSpillFile, file: string, maxBytes: number) {
  const records: billingV1.UsageRecord[] = [];
  let offset = 0;
  let corrupt = 0;
  for (;;) {
    const chunk = await spill.readChunk(file, offset, maxBytes);
    records.push(...chunk.records);
    corrupt += chunk.corrupt;
    offset = chunk.nextOffset;
    if (chunk.done) return { records, corrupt };
  }
}

describe('OutboxSpillFile', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fastloop-spill-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads back chunk by chunk exactly the records appended, whatever the chunk size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(recordArb, { maxLength: 8 }), { maxLength: 5 }),
        fc.integer({ min: 1, max: 2048 }),
        async (batches, maxBytes) => {
          const spill = new OutboxSpillFile(join(dir, `p${Math.random()}`));
          for (const batch of batches) await spill.append(batch);
          const files = await spill.claim();
          const all = batches.flat();
          if (all.length === 0) return expect(files).toEqual([]);
          expect(files).toHaveLength(1);
          expect(await readAll(spill, files[0], maxBytes)).toEqual({ records: all, corrupt: 0 });
        },
      ),
      { numRuns: 60 },
    );
  });

  it('skips a torn last line and counts it as corrupt', async () => {
    const spill = new OutboxSpillFile(dir);
    const ok = billingV1.UsageRecord.fromPartial({ responseId: 'resp_ok', tenant: 't', model: 'm', completedAtMs: 1 });
    await spill.append([ok]);
    appendFileSync(spill.activePath, '{"responseId":"resp_torn","ten');
    const [file] = await spill.claim();
    expect(await readAll(spill, file, 64)).toEqual({ records: [ok], corrupt: 1 });
  });

  it('moves the active file aside on claim so later appends start a new file', async () => {
    const spill = new OutboxSpillFile(dir);
    const r = (id: string) => billingV1.UsageRecord.fromPartial({ responseId: id, tenant: 't', model: 'm' });
    await spill.append([r('resp_1')]);
    const first = await spill.claim();
    await spill.append([r('resp_2')]);
    expect(readFileSync(spill.activePath, 'utf8')).toContain('resp_2');
    const second = await spill.claim();
    expect(second).toHaveLength(2);
    expect(second[0]).toBe(first[0]);
    expect(existsSync(spill.activePath)).toBe(false);
    await spill.remove(second[0]);
    await spill.remove(second[1]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('lists nothing for a folder that does not exist yet', async () => {
    await expect(new OutboxSpillFile(join(dir, 'missing')).claim()).resolves.toEqual([]);
  });

  it('appends synchronously too, for records that arrive after close', async () => {
    const spill = new OutboxSpillFile(join(dir, 'sync'));
    spill.appendSync([billingV1.UsageRecord.fromPartial({ responseId: 'resp_late', tenant: 't' })]);
    const [file] = await spill.claim();
    expect((await readAll(spill, file, 1024)).records.map((x) => x.responseId)).toEqual(['resp_late']);
  });
});
