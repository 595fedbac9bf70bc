import { createRandom, pick, type Random } from '@fastloop/service-kit';

/**
 * A developer-style system prompt of about 2,000 tokens, like the ones coding agents send on every
 * turn: a fixed preamble, then sections of rules assembled deterministically from phrase lists.
 */

/** Characters of instructions; about 2,000 o200k tokens for this text (checked in the spec). */
export const INSTRUCTIONS_TARGET_CHARS = 9_400;

const PREAMBLE = `You are a coding agent running in a terminal on the user's machine. You and the user share one workspace: a TypeScript monorepo managed with Nx. You are expected to be precise, safe and helpful.

You can read and write files, list directories, search the code, run shell commands and tests, apply patches, look at the git diff, and consult the web. Use the tools whenever they help; never guess the content of a file you can read. Keep going until the user's request is completely resolved before ending your turn. Only stop when you are sure the problem is solved.

# How you work
- Start by understanding the request and the relevant code. Read the files involved and their tests before changing anything.
- Plan the change in small steps. Explain the plan in one or two sentences before you start editing.
- Make the smallest change that solves the problem at its root. Do not fix unrelated bugs or reformat unrelated code.
- After each change, run the narrowest test that covers it, then the project's whole suite before you finish.
- When a command fails, read the whole error output, find the cause, and fix it; do not retry blindly.
`;

const SECTIONS = [
  'Editing files',
  'Running commands',
  'Testing',
  'Code style',
  'Git and version control',
  'Communicating with the user',
  'Safety',
  'Performance',
];

const SUBJECTS = [
  'a new module',
  'an exported function',
  'a public type',
  'a configuration option',
  'a test file',
  'an error message',
  'a log line',
  'a dependency',
  'a generated file',
  'a database migration',
  'a shell script',
  'a CLI flag',
  'an HTTP handler',
  'a WebSocket frame handler',
  'a gRPC service',
  'a retry loop',
  'a cache',
  'a timeout',
];

const ACTIONS = [
  'When you add',
  'Before you remove',
  'If you rename',
  'When you change',
  'Whenever you touch',
  'If you cannot find',
  'When the user asks about',
  'Before you deprecate',
  'After you refactor',
  'When you review',
];

const RULES = [
  'update every caller in the same change and mention the ones you could not verify',
  'keep the existing naming scheme of the surrounding code, even if you would choose differently',
  'write a unit test beside it whose name reads as a sentence describing the behaviour',
  'document its default value and the reason for it in a TSDoc comment',
  'check the project boundaries in project.json tags so that no app imports another app',
  'search the repository for other uses with grep before assuming there are none',
  'run the type checker for the whole workspace, because isolated transpilation hides type errors',
  'prefer a small pure function that is easy to test over logic spread across handlers',
  'keep the file under four hundred lines and split it by concern if it would grow beyond that',
  'never log secrets, API keys or prompt text; redact them at the logger, not at each call site',
  'preserve backwards compatibility of the wire format unless the user explicitly asks to break it',
  'measure before and after with the existing benchmark and report both numbers honestly',
  'ask the user only when the request is ambiguous in a way that changes the result',
  'leave the generated code alone and change its source of truth instead, then regenerate',
  'give every stream an idle timeout and exactly one terminal event',
  'explain in the final message what you changed, why, and how you verified it, in a few lines',
];

const CLOSING = `
# Final answer
Your final message should be short and factual: what changed, which files, how you verified it (the exact commands and their result), and anything the user must still do. Do not paste whole files into the answer; reference them by path. If something could not be done, say so plainly and say what would be needed.
`;

/** The instructions for `seed`: same seed, same text, about {@link INSTRUCTIONS_TARGET_CHARS} characters. */
export function buildInstructions(seed: number, targetChars = INSTRUCTIONS_TARGET_CHARS): string {
  const random = createRandom(seed ^ 0x1257);
  const parts = [PREAMBLE];
  let length = PREAMBLE.length + CLOSING.length;
  for (let s = 0; length < targetChars; s++) {
    const header = `\n# ${SECTIONS[s % SECTIONS.length]}${s >= SECTIONS.length ? ` (continued ${Math.floor(s / SECTIONS.length)})` : ''}\n`;
    parts.push(header);
    length += header.length;
    for (let i = 0; i < 6 && length < targetChars; i++) {
      const line = `- ${ruleLine(random)}\n`;
      parts.push(line);
      length += line.length;
    }
  }
  parts.push(CLOSING);
  return parts.join('');
}

function ruleLine(random: Random): string {
  return `${pick(random, ACTIONS)} ${pick(random, SUBJECTS)}, ${pick(random, RULES)}.`;
}
