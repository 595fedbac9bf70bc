import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** The repository root (this file sits in tools/code-bounds/). */
export const REPO_ROOT = resolve(__dirname, '..', '..');

/** Every `.ts` file under `dir` (absolute), skipping node_modules; specs only when asked. */
export function sourceFiles(dir: string, options: { specs?: boolean } = {}): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts') && (options.specs || !name.endsWith('.spec.ts')))
        out.push(path);
    }
  };
  walk(dir);
  return out.sort();
}

/** A path relative to the repository root, with forward slashes. */
export function repoPath(path: string): string {
  return relative(REPO_ROOT, path).split('\\').join('/');
}

/** One file parsed on its own (no type information), for the syntactic bounds. */
export function parseFile(path: string, text = readFileSync(path, 'utf8')): ts.SourceFile {
  return ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
}

/**
 * A type-checked program over `rootNames` with the workspace's path mapping, so calls into other
 * files and into the libs resolve to their declarations.
 */
export function createProgram(rootNames: readonly string[]): ts.Program {
  const configPath = join(REPO_ROOT, 'tsconfig.base.json');
  const config = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, REPO_ROOT);
  return ts.createProgram({ rootNames, options: { ...parsed.options, noEmit: true, types: [] } });
}
