/**
 * The value of an unlabelled (or single-series) sample `name` in a Prometheus text page: 0 for a
 * declared metric without samples; throws for one the page does not declare (renamed, removed).
 */
export function parseCounter(text: string, name: string): number {
  const base = name.replace(/_(sum|count|bucket)$/, '');
  if (!new RegExp(`^# TYPE (${name}|${base}) `, 'm').test(text)) throw new Error(`metric ${name} is not on this page`);
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})?\\s+(\\S+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}
