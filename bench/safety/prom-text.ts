/** The value of an unlabelled (or single-series) sample `name` in a Prometheus text page; 0 when absent. */
export function parseCounter(text: string, name: string): number {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})?\\s+(\\S+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}
