import { deserializeJson, runJsonTask } from '../render-pool/json-task';
import type { JsonParser } from '../turn/large-body-gate';

/**
 * A JsonParser that runs the render threads' parse on the calling thread, for tests of what lies
 * around the render pool; `seen` records each call's tenant and size.
 */
export function inPlaceJsonParser(seen?: { tenant: string; bytes: number }[]): JsonParser {
  return async (tenant, bytes) => {
    seen?.push({ tenant, bytes: bytes.byteLength });
    const parsed = runJsonTask({ json: bytes });
    return () => deserializeJson(parsed);
  };
}
