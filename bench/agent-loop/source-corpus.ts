import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** One source file the simulated tools "return". */
export interface CorpusFile {
  /** Path relative to the repository root, with `/` separators. */
  readonly path: string;
  readonly text: string;
}

/** Folders whose `*.ts` files make up the corpus. */
export const CORPUS_ROOTS = ['apps', 'libs'] as const;

/**
 * Text that the safety service's secret rules would block (test fixtures carry fake keys): a tool
 * output containing it would end the rollout with `content_blocked`, which is not what we measure.
 */
const SECRET_MARKERS = /PRIVATE KEY|AKIA|ASIA[A-Z0-9]|sk_live_|xox[baprs]-|AccountKey=|service_account/;

/**
 * Reads every `*.ts` file under apps/ and libs/ of `repoRoot`, sorted by path, skipping specs,
 * test fakes and files with secret-like text. Other engineers edit these folders, so the corpus is
 * read once per run: every mode of a run sees the same tool outputs.
 */
export function loadCorpus(repoRoot: string): CorpusFile[] {
  const files: CorpusFile[] = [];
  for (const root of CORPUS_ROOTS) walk(join(repoRoot, root), repoRoot, files);
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  if (files.length === 0) throw new Error(`no source files found under ${CORPUS_ROOTS.join(', ')} of ${repoRoot}`);
  return files;
}

function walk(dir: string, repoRoot: string, out: CorpusFile[]): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // a folder removed by a concurrent edit, or absent
  }
  for (const entry of entries) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (
        entry.name === 'node_modules' ||
        entry.name === 'testing' ||
        entry.name === 'fixtures' ||
        entry.name.startsWith('.')
      )
        continue;
      walk(full, repoRoot, out);
    } else if (
      entry.isFile() &&
      entry.name.endsWith('.ts') &&
      !entry.name.endsWith('.spec.ts') &&
      !entry.name.endsWith('.d.ts')
    ) {
      let text: string;
      try {
        text = readFileSync(full, 'utf8');
      } catch {
        continue;
      }
      if (text.length < 200 || SECRET_MARKERS.test(text)) continue;
      out.push({ path: relative(repoRoot, full).split(sep).join('/'), text });
    }
  }
}
