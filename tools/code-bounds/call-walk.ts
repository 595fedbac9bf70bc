import ts from 'typescript';

/** One call of the walk that enters another file. */
export interface WalkStep {
  /** The file the call is made from and the one it enters (as `fileLabel` names them). */
  from: string;
  to: string;
  /** The function entered. */
  callee: string;
  /** The walk had been in `to` before and left it. */
  reentry: boolean;
}

/** Where a walk starts: a function, or `Class.method`, declared in `file`. */
export interface WalkEntry {
  file: string;
  name: string;
}

/**
 * Follows a request through the code the way a reader does: from `entry`, every call whose
 * target is a function with a body in a file `within` accepts is followed in source order
 * (arguments before the call they are passed to), each function's body once. Every call that
 * moves to another file is a step; a step into a file the walk had already entered and left is a
 * re-entry. Calls through interfaces (no body to read) and into other files (libs) are not steps.
 */
export function walkCalls(
  program: ts.Program,
  entry: WalkEntry,
  within: (fileName: string) => boolean,
  fileLabel: (fileName: string) => string = (f) => f,
  options: { errorPaths?: boolean } = {},
): WalkStep[] {
  const checker = program.getTypeChecker();
  const start = findDeclaration(program, entry);
  const steps: WalkStep[] = [];
  const entered = new Set<string>([start.getSourceFile().fileName]);
  const expanded = new Set<ts.Node>([start]);

  const follow = (decl: ts.SignatureDeclaration) => {
    const file = decl.getSourceFile().fileName;
    const visit = (node: ts.Node): void => {
      if (!options.errorPaths && isErrorHandling(node)) return;
      ts.forEachChild(node, visit);
      if (!ts.isCallExpression(node) && !ts.isNewExpression(node)) return;
      const target = checker.getResolvedSignature(node)?.declaration;
      if (!target || ts.isJSDocSignature(target) || !hasBody(target)) return;
      const targetFile = target.getSourceFile().fileName;
      if (!within(targetFile)) return;
      if (targetFile !== file) {
        steps.push({
          from: fileLabel(file),
          to: fileLabel(targetFile),
          callee: nameOf(target),
          reentry: entered.has(targetFile),
        });
        entered.add(targetFile);
      }
      if (expanded.has(target)) return;
      expanded.add(target);
      follow(target);
    };
    if (hasBody(decl)) visit(decl.body);
  };
  follow(start);
  return steps;
}

/**
 * Code that runs only when something failed: a `catch` clause, or the handler passed to a
 * promise's `.catch()`. A request's walk is its path when nothing fails.
 */
function isErrorHandling(node: ts.Node): boolean {
  if (ts.isCatchClause(node)) return true;
  const parent = node.parent;
  return (
    parent !== undefined &&
    ts.isCallExpression(parent) &&
    parent.arguments.includes(node as ts.Expression) &&
    ts.isPropertyAccessExpression(parent.expression) &&
    parent.expression.name.text === 'catch'
  );
}

/**
 * The returns of a walk: steps into a file the walk had entered and left before, counted once per
 * caller file and callee (the same call repeated is one return). Files the walk never leaves for
 * another file (leaf helpers: a timer, a log view, a cache) are look-ups, not returns.
 */
export function returnsOf(steps: readonly WalkStep[]): WalkStep[] {
  const flow = new Set(steps.map((s) => s.from));
  const seen = new Set<string>();
  return steps.filter((s) => {
    const key = `${s.from}\u0000${s.to}\u0000${s.callee}`;
    if (!s.reentry || !flow.has(s.to) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function hasBody(decl: ts.Node): decl is ts.SignatureDeclaration & { body: ts.Node } {
  return ts.isFunctionLike(decl) && 'body' in decl && decl.body !== undefined;
}

function nameOf(decl: ts.SignatureDeclaration): string {
  const own = decl.name && ts.isIdentifier(decl.name) ? decl.name.text : undefined;
  const cls = ts.isClassLike(decl.parent) && decl.parent.name ? decl.parent.name.text : undefined;
  if (ts.isConstructorDeclaration(decl)) return `new ${cls ?? '?'}`;
  if (own) return cls ? `${cls}.${own}` : own;
  const parent = decl.parent;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '<function>';
}

function findDeclaration(program: ts.Program, entry: WalkEntry): ts.SignatureDeclaration {
  const file = program.getSourceFile(entry.file);
  if (!file) throw new Error(`walk entry: ${entry.file} is not in the program`);
  const [owner, member] = entry.name.includes('.') ? entry.name.split('.') : [undefined, entry.name];
  let found: ts.SignatureDeclaration | undefined;
  const visit = (node: ts.Node) => {
    if (found) return;
    if (hasBody(node) && nameOf(node) === (owner ? `${owner}.${member}` : member)) found = node;
    else ts.forEachChild(node, visit);
  };
  visit(file);
  if (!found) throw new Error(`walk entry: no function ${entry.name} with a body in ${entry.file}`);
  return found;
}
