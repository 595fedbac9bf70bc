import { LocalShellActionSchema, type LocalShellAction } from '@fastloop/protocol';

/** The arguments the model writes to the `local_shell` function: the action without its `type`. */
const ShellArgumentsSchema = LocalShellActionSchema.omit({ type: true }).extend({
  command: LocalShellActionSchema.shape.command.min(1),
  env: LocalShellActionSchema.shape.env.default({}),
});

/**
 * Reads a model's `local_shell` arguments as a `local_shell_call` action, or undefined when they
 * are not one (then the call goes out as the plain `function_call` the model wrote). The inverse of
 * how a `local_shell_call` renders (item-conversion.ts).
 */
export function localShellAction(args: string): LocalShellAction | undefined {
  let json: unknown;
  try {
    json = JSON.parse(args);
  } catch {
    return undefined;
  }
  const parsed = ShellArgumentsSchema.safeParse(json);
  return parsed.success ? { type: 'exec', ...parsed.data } : undefined;
}
