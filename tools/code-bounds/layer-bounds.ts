import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { parseFile } from './source-program';

/** An import from a module to one in a layer above it (or beside it, in another folder). */
export interface UpwardImport {
  from: string;
  to: string;
  fromLayer: string;
  toLayer: string;
}

/**
 * Layers of an app, top first: a module may import modules of its own folder and of lower
 * layers only. Each layer lists folders under the app's `src/` (`'.'` for files directly in it,
 * or a file name such as `main.ts` to place one root file on its own).
 */
export type Layers = readonly (readonly string[])[];

function topFolder(path: string): string {
  return path.includes('/') ? path.slice(0, path.indexOf('/')) : '.';
}

/** The layer of a module (path relative to the app's `src/`): its file's or its folder's. */
export function layerOf(layers: Layers, path: string): { index: number; name: string } | undefined {
  for (const candidate of [path, topFolder(path)]) {
    const index = layers.findIndex((layer) => layer.includes(candidate));
    if (index >= 0) return { index, name: candidate };
  }
  return undefined;
}

/** The relative imports (and re-exports) of `file`, resolved to paths relative to `srcDir`. */
export function relativeImports(srcDir: string, file: string): string[] {
  const out: string[] = [];
  for (const statement of parseFile(file).statements) {
    const spec =
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
        ? statement.moduleSpecifier.text
        : undefined;
    if (!spec?.startsWith('.')) continue;
    const target = relative(srcDir, join(dirname(file), spec))
      .split('\\')
      .join('/');
    out.push(target.endsWith('.ts') ? target : `${target}.ts`);
  }
  return out;
}

/**
 * Imports that point up the layers or sideways into another folder of the same layer. Modules in
 * no layer (test support) are skipped; a module whose folder is missing from `layers` is reported
 * with layer `?`, so a new folder must be placed before it can import or be imported.
 */
export function upwardImports(srcDir: string, files: readonly string[], layers: Layers): UpwardImport[] {
  const out: UpwardImport[] = [];
  for (const file of files) {
    const from = relative(srcDir, file).split('\\').join('/');
    if (from.startsWith('testing/')) continue;
    const fromLayer = layerOf(layers, from);
    for (const to of relativeImports(srcDir, file)) {
      if (to.startsWith('testing/')) continue;
      const toLayer = layerOf(layers, to);
      if (fromLayer && toLayer && fromLayer.name === toLayer.name) continue;
      if (!fromLayer || !toLayer || toLayer.index <= fromLayer.index)
        out.push({ from, to, fromLayer: fromLayer?.name ?? '?', toLayer: toLayer?.name ?? '?' });
    }
  }
  return out;
}
