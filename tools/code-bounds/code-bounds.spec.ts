import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '@fastloop/service-kit';
import { returnsOf, walkCalls } from './call-walk';
import {
  EDGE_BOUNDS,
  edgeUpwardImports,
  formattedLines,
  largeFunctions,
  literalCodeComparisons,
  longFiles,
  turnWalk,
} from './edge-bounds';
import { upwardImports } from './layer-bounds';
import { codeComparisons, functionShapes, lineCount } from './shape-bounds';
import { createProgram, parseFile } from './source-program';

const CODES = new Set<string>(Object.values(ErrorCode));

/** A folder of source files for the checks' own tests, removed afterwards. */
function fixture(files: Record<string, string>): { dir: string; paths: string[]; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'code-bounds-'));
  const paths = Object.entries(files).map(([name, text]) => {
    const path = join(dir, name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
    return path;
  });
  return { dir, paths, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('the bounds checks', () => {
  it('measure functions by their lines (nested ones included) and parameters', () => {
    const source = `function outer(a: number, b: number, c: number, d: number, e: number, f: number) {\n  const inner = () => {\n    return a;\n  };\n  return inner();\n}\n`;
    const shapes = functionShapes(parseFile('x.ts', source));
    expect(shapes).toEqual([
      { name: 'outer', line: 1, lines: 6, params: 6 },
      { name: 'inner', line: 2, lines: 3, params: 0 },
    ]);
    expect(lineCount(source)).toBe(6);
  });

  it('count a file’s lines as Prettier formats it', () => {
    const f = fixture({ 'long.ts': `export const x = [${'1, '.repeat(80)}1];\n` });
    try {
      // One line as written, wrapped at 120 columns by Prettier.
      expect(formattedLines(f.paths)[f.paths[0]]).toBeGreaterThan(1);
    } finally {
      f.remove();
    }
  });

  it('find an internal error code compared as a string literal, and not a constant or an unrelated string', () => {
    const source = [
      `if (err.code === 'prefix_miss') retry();`,
      `if ('unavailable' !== e.code) throw e;`,
      `switch (err.code) { case 'model_not_found': break; case ErrorCode.internal: break; }`,
      `if (err.code === ErrorCode.prefixMiss) retry();`,
      `if (err.code === 'ENOENT') return;`,
      `if (status === 'cancelled') return;`,
    ].join('\n');
    expect(codeComparisons(parseFile('x.ts', source), CODES).map((c) => c.line)).toEqual([1, 2, 3]);
  });

  it('find an import up the layers and one sideways into a folder of the same layer', () => {
    const f = fixture({
      'turn/a.ts': `import { b } from '../safety/b';\nexport const a = b;\n`,
      'safety/b.ts': `import { a } from '../turn/a';\nexport const b = 1;\n`,
      'safety/c.ts': `import { d } from '../clients/d';\nexport const c = d;\n`,
      'clients/d.ts': `export const d = 1;\n`,
    });
    try {
      const found = upwardImports(f.dir, f.paths, [['turn'], ['safety', 'clients']]);
      expect(found).toEqual([
        { from: 'safety/b.ts', to: 'turn/a.ts', fromLayer: 'safety', toLayer: 'turn' },
        { from: 'safety/c.ts', to: 'clients/d.ts', fromLayer: 'safety', toLayer: 'clients' },
      ]);
    } finally {
      f.remove();
    }
  });

  it('count a walk’s returns to a file it left, once per caller and callee, and not look-ups into leaf files', () => {
    const f = fixture({
      'run.ts': `import { stage1, helper } from './stage';\nimport { look } from './leaf';\nexport function run() {\n  stage1();\n  look();\n  helper();\n  helper();\n  look();\n}\n`,
      'stage.ts': `import { look } from './leaf';\nexport function stage1() {\n  look();\n}\nexport function helper() {\n  look();\n}\n`,
      'leaf.ts': `export function look() {\n  return 1;\n}\n`,
    });
    try {
      const program = createProgram(f.paths);
      const steps = walkCalls(program, { file: f.paths[0], name: 'run' }, (p) => p.startsWith(f.dir));
      // run → stage (stage1) → leaf, back to run → leaf, run → stage again (helper): one return;
      // helper's second call and the leaf look-ups are not returns.
      expect(returnsOf(steps).map((s) => `${s.callee}`)).toEqual(['helper']);
    } finally {
      f.remove();
    }
  });
});

describe('the edge keeps its bounds', () => {
  it(`has no source file over ${EDGE_BOUNDS.fileLines} formatted lines`, () => {
    expect(longFiles()).toEqual([]);
  });

  it(`has no function over ${EDGE_BOUNDS.functionLines} lines or ${EDGE_BOUNDS.functionParams} parameters (main.ts aside)`, () => {
    expect(largeFunctions()).toEqual([]);
  });

  it('has no import pointing up its layers', () => {
    expect(edgeUpwardImports()).toEqual([]);
  });

  it(`walks one turn's request back into a file it already left at most ${EDGE_BOUNDS.walkReturns} times`, () => {
    const { steps, returns } = turnWalk();
    // The walk reaches every stage of a turn (a walk that stopped early would pass for the wrong reason).
    const reached = new Set(steps.map((s) => s.to));
    for (const stage of ['input', 'route', 'render', 'judge', 'generate', 'finish'])
      expect(reached).toContain(`turn/${stage}-stage.ts`);
    expect(returns.length).toBeLessThanOrEqual(EDGE_BOUNDS.walkReturns);
  }, 60_000);
});

describe('error codes', () => {
  it('are never compared as string literals (apps, libs, tools, bench, e2e)', () => {
    expect(literalCodeComparisons(CODES)).toEqual([]);
  });
});
