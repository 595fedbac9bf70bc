import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { returnsOf, walkCalls, type WalkStep } from './call-walk';
import { upwardImports, type Layers, type UpwardImport } from './layer-bounds';
import { codeComparisons, functionShapes, type CodeComparison } from './shape-bounds';
import { createProgram, parseFile, REPO_ROOT, repoPath, sourceFiles } from './source-program';

/** The edge's source folder. */
export const EDGE_SRC = join(REPO_ROOT, 'apps', 'edge', 'src');

/** The bounds issue 19 set on the edge (README "Code bounds"). */
export const EDGE_BOUNDS = {
  /** Formatted lines (Prettier, 120 columns) of any edge source file, specs aside. */
  fileLines: 250,
  /** Lines of any function in apps/edge/src, main.ts aside (nested functions count in their parent). */
  functionLines: 60,
  functionParams: 5,
  /** Returns to a file already left, walking one turn's request (see call-walk.ts). */
  walkReturns: 5,
} as const;

/**
 * The edge's layers, top first: a module imports its own folder and lower layers only, so nothing
 * in the edge points up (e.g. safety/ never imports turn/). Test support (testing/) is outside.
 */
export const EDGE_LAYERS: Layers = [
  ['main.ts'],
  ['http', 'ws', 'grpc'],
  ['session', 'store'],
  ['turn'],
  ['safety', 'clients', 'usage', 'render-pool'],
  ['.'],
];

/** Where a turn's request enters the edge's code on a persistent connection (WebSocket, gRPC). */
export const TURN_WALK_ENTRY = { file: join(EDGE_SRC, 'session', 'connection.ts'), name: 'Connection.receive' };

/** Edge source files over the line bound, with their formatted length. */
export function longFiles(): { file: string; lines: number }[] {
  const counts = formattedLines(sourceFiles(EDGE_SRC));
  return Object.entries(counts)
    .filter(([, lines]) => lines > EDGE_BOUNDS.fileLines)
    .map(([file, lines]) => ({ file: repoPath(file), lines }));
}

/**
 * Functions of the edge (main.ts aside) over the line or parameter bound. Lines as written: the
 * files are formatted (`npm run lint` checks it), so these are formatted lines.
 */
export function largeFunctions(): string[] {
  const out: string[] = [];
  for (const file of sourceFiles(EDGE_SRC)) {
    if (file === join(EDGE_SRC, 'main.ts')) continue;
    for (const f of functionShapes(parseFile(file)))
      if (f.lines > EDGE_BOUNDS.functionLines || f.params > EDGE_BOUNDS.functionParams)
        out.push(`${repoPath(file)}:${f.line} ${f.name}: ${f.lines} lines, ${f.params} parameters`);
  }
  return out;
}

/** Edge imports that point up its layers. */
export function edgeUpwardImports(): UpwardImport[] {
  return upwardImports(EDGE_SRC, sourceFiles(EDGE_SRC), EDGE_LAYERS);
}

/** The walk of one turn's request from {@link TURN_WALK_ENTRY}, error paths included, and its returns. */
export function turnWalk(): { steps: WalkStep[]; returns: WalkStep[] } {
  const program = createProgram(sourceFiles(EDGE_SRC));
  const within = (f: string) => f.startsWith(EDGE_SRC) && !f.includes('/testing/') && !f.endsWith('.spec.ts');
  const label = (f: string) => f.slice(EDGE_SRC.length + 1);
  const steps = walkCalls(program, TURN_WALK_ENTRY, within, label, { errorPaths: true });
  return { steps, returns: returnsOf(steps) };
}

/** Comparisons of an error's code with a string literal naming one of `codes`, in every source and spec. */
export function literalCodeComparisons(codes: ReadonlySet<string>): (CodeComparison & { file: string })[] {
  const roots = ['apps', 'libs', 'tools', 'bench', 'e2e'].map((d) => join(REPO_ROOT, d));
  const out: (CodeComparison & { file: string })[] = [];
  for (const root of roots)
    for (const file of sourceFiles(root, { specs: true })) {
      if (file.includes('/generated/')) continue;
      for (const c of codeComparisons(parseFile(file), codes)) out.push({ ...c, file: repoPath(file) });
    }
  return out;
}

/** Each file's line count once formatted by Prettier (formatted-lines.mjs, in a process of its own). */
export function formattedLines(files: readonly string[]): Record<string, number> {
  const script = join(__dirname, 'formatted-lines.mjs');
  return JSON.parse(execFileSync(process.execPath, [script, ...files], { encoding: 'utf8' })) as Record<string, number>;
}
