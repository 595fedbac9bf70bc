import type { FreeformFormat, ParsedTool } from '../model-profile';
import { FREEFORM_GRAMMAR_PREFIX, FREEFORM_SIGNATURE, FREEFORM_TEXT_LINE } from './harmony-header-text';
import { parseToolSignature, TsSyntaxError } from './typescript-to-schema';

const TOOLS_HEADING = '# Tools\n\n';
const NAMESPACE_HEADING = /## ([^\n]+)\n\n/y;
const COMMENT_LINE = /\/\/ ?([^\n]*)\n/y;
const TYPE_HEAD = /type ([^\n=]+?) = /y;
const FREEFORM_TYPE = `(${FREEFORM_SIGNATURE}) => any;`;
/** `(syntax): "definition as a JSON string"`. */
const GRAMMAR_TAIL = /^\(([^)]*)\): ("(?:[^"\\]|\\.)*")$/;

/**
 * Recovers the tools from a developer message as `developerMessageText` renders it.
 *
 * The tools section is the last section, but instructions are free text and may themselves
 * contain `# Tools`: each heading that starts a line is tried, and the first one from which the
 * rest of the message parses completely wins. Returns `[]` when the message has no tools.
 */
export function parseToolsSection(content: string): ParsedTool[] {
  let lastError: unknown;
  for (let at = content.indexOf(TOOLS_HEADING); at !== -1; at = content.indexOf(TOOLS_HEADING, at + 1)) {
    if (at > 0 && content[at - 1] !== '\n') continue;
    try {
      return parseNamespaces(content, at + TOOLS_HEADING.length);
    } catch (error) {
      if (!(error instanceof TsSyntaxError)) throw error;
      lastError = error;
    }
  }
  if (lastError) throw lastError;
  return [];
}

function parseNamespaces(src: string, start: number): ParsedTool[] {
  const tools: ParsedTool[] = [];
  let pos = start;
  for (;;) {
    const heading = matchAt(NAMESPACE_HEADING, src, pos);
    if (!heading) throw new TsSyntaxError('expected "## namespace"', pos);
    const namespace = heading[1];
    pos = heading.end;
    pos = skipComments(src, pos).end; // the namespace description
    pos = expectText(src, pos, `namespace ${namespace} {\n\n`);
    const closing = `} // namespace ${namespace}`;
    while (!src.startsWith(closing, pos)) {
      const parsed = parseTool(src, pos, namespace);
      tools.push(parsed.tool);
      pos = expectText(src, parsed.end, '\n\n');
    }
    pos += closing.length;
    if (pos === src.length) return tools;
    pos = expectText(src, pos, '\n\n');
  }
}

function parseTool(src: string, start: number, namespace: string): { tool: ParsedTool; end: number } {
  const comments = skipComments(src, start);
  const head = matchAt(TYPE_HEAD, src, comments.end);
  if (!head) throw new TsSyntaxError('expected "type name = "', comments.end);
  if (src.startsWith(FREEFORM_TYPE, head.end))
    return parseFreeformTool(namespace, head[1], comments, head.end + FREEFORM_TYPE.length);
  const { parameters, end } = parseToolSignature(src, head.end);
  const tool: ParsedTool = { namespace, name: head[1], parameters };
  if (comments.lines.length > 0) tool.description = comments.lines.join('\n');
  return { tool, end };
}

/** A custom tool: its last comment line is the input format, the lines above it the description. */
function parseFreeformTool(
  namespace: string,
  name: string,
  comments: { lines: string[]; end: number },
  end: number,
): { tool: ParsedTool; end: number } {
  const formatLine = comments.lines[comments.lines.length - 1];
  const freeform = formatLine === undefined ? undefined : parseFreeformLine(formatLine);
  if (!freeform) throw new TsSyntaxError('expected the input format of a freeform tool', comments.end);
  const tool: ParsedTool = { namespace, name, parameters: { type: 'string' }, freeform };
  if (comments.lines.length > 1) tool.description = comments.lines.slice(0, -1).join('\n');
  return { tool, end };
}

function parseFreeformLine(line: string): FreeformFormat | undefined {
  if (line === FREEFORM_TEXT_LINE) return { type: 'text' };
  if (!line.startsWith(FREEFORM_GRAMMAR_PREFIX)) return undefined;
  const m = GRAMMAR_TAIL.exec(line.slice(FREEFORM_GRAMMAR_PREFIX.length));
  if (!m) return undefined;
  try {
    const definition: unknown = JSON.parse(m[2]);
    return typeof definition === 'string' ? { type: 'grammar', syntax: m[1], definition } : undefined;
  } catch {
    return undefined;
  }
}

function skipComments(src: string, start: number): { lines: string[]; end: number } {
  const lines: string[] = [];
  let pos = start;
  for (let m = matchAt(COMMENT_LINE, src, pos); m; m = matchAt(COMMENT_LINE, src, pos)) {
    lines.push(m[1]);
    pos = m.end;
  }
  return { lines, end: pos };
}

function expectText(src: string, pos: number, text: string): number {
  if (!src.startsWith(text, pos)) throw new TsSyntaxError(`expected ${JSON.stringify(text)}`, pos);
  return pos + text.length;
}

function matchAt(re: RegExp, src: string, pos: number): (RegExpExecArray & { end: number }) | undefined {
  re.lastIndex = pos;
  const m = re.exec(src);
  return m ? Object.assign(m, { end: pos + m[0].length }) : undefined;
}
