/**
 * Re-renders bench/results/routing.md from its routing.json (after a change to the report's wording;
 * the figures are the run's). `npx tsx bench/routing/render.ts [dir]`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { renderMarkdown, type RoutingReport } from './report';

const dir = resolve(process.argv[2] ?? join(__dirname, '..', 'results'));
const report = JSON.parse(readFileSync(join(dir, 'routing.json'), 'utf8')) as RoutingReport;
writeFileSync(join(dir, 'routing.md'), renderMarkdown(report));
process.stderr.write(`wrote ${join(dir, 'routing.md')}\n`);
