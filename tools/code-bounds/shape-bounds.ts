import ts from 'typescript';

/** A function-like node's size: formatted lines (nested functions included) and parameters. */
export interface FunctionShape {
  /** `name` or `<arrow>`, with the line it starts on. */
  name: string;
  line: number;
  lines: number;
  params: number;
}

/** Lines of a text, as an editor numbers them (a final newline does not start a line). */
export function lineCount(text: string): number {
  if (text.length === 0) return 0;
  const lines = text.split('\n').length;
  return text.endsWith('\n') ? lines - 1 : lines;
}

/** Every function, method, accessor, constructor and arrow function with a body in `file`. */
export function functionShapes(file: ts.SourceFile): FunctionShape[] {
  const out: FunctionShape[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const end = file.getLineAndCharacterOfPosition(node.getEnd()).line;
      const params = node.parameters.filter((p) => !(ts.isIdentifier(p.name) && p.name.text === 'this')).length;
      out.push({ name: functionName(node), line: start + 1, lines: end - start + 1, params });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

function functionName(node: ts.SignatureDeclaration): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name && (ts.isIdentifier(node.name) || ts.isPrivateIdentifier(node.name))) return node.name.text;
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '<arrow>';
}

/** A comparison of an error's `code` with a string literal that is one of `codes`. */
export interface CodeComparison {
  line: number;
  text: string;
}

/**
 * Comparisons (`===`, `!==`, `==`, `!=`, and `case` labels of a `switch` on a code) of an error
 * `code` with a string literal naming one of `codes`: the typed constants must be used instead.
 */
export function codeComparisons(file: ts.SourceFile, codes: ReadonlySet<string>): CodeComparison[] {
  const out: CodeComparison[] = [];
  const isCode = (e: ts.Expression) =>
    (ts.isPropertyAccessExpression(e) && e.name.text === 'code') || (ts.isIdentifier(e) && e.text === 'code');
  const isListedLiteral = (e: ts.Expression) => ts.isStringLiteralLike(e) && codes.has(e.text);
  const report = (node: ts.Node) =>
    out.push({ line: file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1, text: node.getText(file) });
  const visit = (node: ts.Node) => {
    if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind)) {
      const { left, right } = node;
      if ((isCode(left) && isListedLiteral(right)) || (isCode(right) && isListedLiteral(left))) report(node);
    }
    if (ts.isSwitchStatement(node) && isCode(node.expression)) {
      for (const clause of node.caseBlock.clauses)
        if (ts.isCaseClause(clause) && isListedLiteral(clause.expression)) report(clause.expression);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);
