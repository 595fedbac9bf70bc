// Prints, as JSON, each file's line count once formatted by Prettier with the repository's config.
// A script of its own: Prettier 3 loads its plugins with dynamic import(), which Jest's module
// sandbox does not run, so the bounds spec asks this process instead.
import { readFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';

const counts = {};
for (const file of process.argv.slice(2)) {
  const text = await format(readFileSync(file, 'utf8'), { ...(await resolveConfig(file)), filepath: file });
  const lines = text.split('\n').length;
  counts[file] = text.endsWith('\n') ? lines - 1 : lines;
}
process.stdout.write(JSON.stringify(counts));
