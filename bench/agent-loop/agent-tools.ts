/**
 * The ten function tools of a coding agent, with JSON schemas shaped like the ones real agents
 * send (strict objects, enums, nested arrays, optional fields). The simulated engine calls them in
 * turn and fills in arguments that fit the schema.
 */

/** A Responses API function tool as it goes on the wire. */
export interface FunctionTool {
  type: 'function';
  name: string;
  description: string;
  strict: boolean;
  parameters: Record<string, unknown>;
}

const str = (description: string) => ({ type: 'string', description });
const int = (description: string, minimum = 0) => ({ type: 'integer', description, minimum });
const bool = (description: string) => ({ type: 'boolean', description });

function tool(
  name: string,
  description: string,
  properties: Record<string, unknown>,
  required: string[],
): FunctionTool {
  return {
    type: 'function',
    name,
    description,
    strict: false,
    parameters: { type: 'object', properties, required, additionalProperties: false },
  };
}

/** The tools, in a fixed order (the simulated engine cycles through them). */
export const AGENT_TOOLS: readonly FunctionTool[] = [
  tool(
    'read_file',
    'Reads a text file from the workspace. Returns the requested line range with line numbers. Prefer reading whole small files over many small ranges.',
    {
      path: str('Path relative to the workspace root, e.g. apps/edge/src/main.ts'),
      start_line: int('First line to return, 1-based', 1),
      end_line: int('Last line to return (inclusive); omit for the end of the file', 1),
      encoding: { type: 'string', enum: ['utf-8', 'latin1'], description: 'Text encoding of the file' },
    },
    ['path'],
  ),
  tool(
    'write_file',
    'Creates or overwrites a file with the given content. Parent directories are created. Use apply_patch for edits to existing files.',
    {
      path: str('Path relative to the workspace root'),
      content: str('The complete new file content'),
      create_only: bool('Fail if the file already exists'),
    },
    ['path', 'content'],
  ),
  tool(
    'list_dir',
    'Lists the entries of a directory, directories first, with sizes. Hidden entries and ignored paths are skipped unless asked for.',
    {
      path: str('Directory relative to the workspace root; "." for the root'),
      depth: int('How many levels to descend (1 = direct children)', 1),
      include_hidden: bool('Include dotfiles and git-ignored paths'),
    },
    ['path'],
  ),
  tool(
    'grep',
    'Searches file contents with a regular expression (ripgrep syntax). Returns matching lines as path:line:text, at most max_results.',
    {
      pattern: str('Regular expression to search for'),
      path: str('Directory or file to search in'),
      glob: {
        type: 'array',
        items: { type: 'string' },
        description: 'Glob filters such as *.ts or !*.spec.ts',
        maxItems: 4,
      },
      case_sensitive: bool('Match case exactly'),
      max_results: int('Maximum number of matching lines', 1),
    },
    ['pattern'],
  ),
  tool(
    'run_shell',
    'Runs a shell command in the workspace with a timeout and returns exit code, stdout and stderr (truncated). Never run interactive programs.',
    {
      command: {
        type: 'array',
        items: { type: 'string' },
        description: 'argv of the command, e.g. ["npm", "test"]',
        minItems: 1,
        maxItems: 6,
      },
      workdir: str('Working directory relative to the workspace root'),
      timeout_ms: int('Kill the command after this many milliseconds', 1),
      env: {
        type: 'object',
        description: 'Extra environment variables',
        properties: {
          NODE_ENV: { type: 'string', enum: ['development', 'test', 'production'] },
          CI: { type: 'string', enum: ['true', 'false'] },
        },
        additionalProperties: false,
      },
    },
    ['command'],
  ),
  tool(
    'apply_patch',
    'Applies a unified diff to the workspace. Hunks must match exactly; on conflict nothing is changed and the rejected hunks are returned.',
    {
      patch: str('The unified diff, with ---/+++ headers and @@ hunks'),
      dry_run: bool('Check that the patch applies without changing files'),
      strip: int('Leading path components to strip, like patch -p', 0),
    },
    ['patch'],
  ),
  tool(
    'search_web',
    'Searches the web and returns the top results with titles, URLs and snippets. Use for library documentation and error messages.',
    {
      query: str('The search query'),
      site: str('Restrict results to this domain, e.g. nodejs.org'),
      max_results: int('Number of results', 1),
      recency: { type: 'string', enum: ['any', 'year', 'month', 'week'], description: 'Only results newer than this' },
    },
    ['query'],
  ),
  tool(
    'git_diff',
    'Shows the working-tree diff (or between two refs) in unified format, optionally limited to paths.',
    {
      base: str('Base ref; default HEAD'),
      target: str('Target ref; default the working tree'),
      paths: { type: 'array', items: { type: 'string' }, description: 'Limit the diff to these paths', maxItems: 8 },
      stat_only: bool('Show only the diffstat'),
      context_lines: int('Lines of context around each change', 0),
    },
    [],
  ),
  tool(
    'run_tests',
    'Runs the test suite (or a subset) and returns a summary: passed, failed, skipped, and the failure messages with stack traces.',
    {
      project: str('Nx project to test, e.g. edge'),
      test_name_pattern: str('Only run tests whose full name matches this pattern'),
      files: { type: 'array', items: { type: 'string' }, description: 'Only run these spec files', maxItems: 8 },
      update_snapshots: bool('Rewrite failing snapshots'),
      coverage: bool('Collect coverage'),
    },
    [],
  ),
  tool(
    'open_url',
    'Fetches a URL and returns its main content as Markdown, without navigation and ads. Long pages are cut at max_chars.',
    {
      url: { type: 'string', format: 'uri', description: 'Absolute http(s) URL' },
      max_chars: int('Cut the content after this many characters', 1),
      selector: str('CSS selector of the part of the page to return'),
    },
    ['url'],
  ),
];
