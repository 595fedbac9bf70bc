import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { RecordedTurn } from './recording-proxy';

/** Where recorded client traffic lives (`e2e/fixtures/<client>-<version>/<transport>.jsonl`). */
export const FIXTURES_DIR = join(__dirname, '..', 'fixtures');

/**
 * One recorded request: what the client sent, verbatim, and the ids of what the server answered
 * (the response id and each output item's type and call_id), which a replay maps to its own ids.
 */
export interface FixtureTurn {
  transport: RecordedTurn['transport'];
  request: Record<string, any>;
  answer: { type: string; id?: string; output: { type: string; call_id?: string; name?: string }[] };
}

/** Writes recorded turns as a fixture (one JSON object per line). */
export function writeFixture(path: string, turns: readonly RecordedTurn[]): void {
  const file = join(FIXTURES_DIR, path);
  mkdirSync(dirname(file), { recursive: true });
  const lines = turns.map((t): FixtureTurn => {
    const response = t.terminal?.response;
    return {
      transport: t.transport,
      request: t.request,
      answer: {
        type: String(t.terminal?.type),
        id: response?.id,
        output: (response?.output ?? []).map((o: any) => ({
          type: o.type,
          ...(o.call_id ? { call_id: o.call_id } : {}),
          ...(o.name ? { name: o.name } : {}),
        })),
      },
    };
  });
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}

/** Reads a fixture written by writeFixture. */
export function readFixture(path: string): FixtureTurn[] {
  return readFileSync(join(FIXTURES_DIR, path), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as FixtureTurn);
}
