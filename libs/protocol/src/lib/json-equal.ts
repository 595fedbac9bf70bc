/**
 * Equality under JSON.stringify, key order included (the renderer walks keys in order), with
 * undefined-valued keys ignored as stringify drops them. Inputs are JSON-parsed data: no cycles.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bs = b as unknown[];
    if (a.length !== bs.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], bs[i])) return false;
    return true;
  }
  const ka = definedKeys(a as Record<string, unknown>);
  const kb = definedKeys(b as Record<string, unknown>);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    if (ka[i] !== kb[i] || !jsonEqual((a as Record<string, unknown>)[ka[i]], (b as Record<string, unknown>)[kb[i]]))
      return false;
  }
  return true;
}

function definedKeys(o: Record<string, unknown>): string[] {
  const keys = Object.keys(o);
  return keys.every((k) => o[k] !== undefined) ? keys : keys.filter((k) => o[k] !== undefined);
}
