import type { ModelProfile } from '@fastloop/model-profiles';
import type { ToolCallWrapper } from './constraint-grammar';

/**
 * The tokens around a forced call's arguments, exactly as the chat template renders them: what
 * every offered call starts with is not sampled but evaluated as given (one batch instead of a
 * decode step per token, and the template's own tokens rather than a tokenization the model
 * picks under the grammar), and what follows the arguments is appended the same way. Only the
 * arguments (and the name, when several tools are offered) are sampled.
 */
export interface CallFraming {
  /** Tokens every offered call starts with (the template's, up to where the names differ). */
  readonly forced: readonly number[];
  /** Their text: the grammar continues after it. */
  readonly forcedText: string;
  /** Tokens after the arguments up to the end of the turn (the same for every tool). */
  readonly tail: readonly number[];
}

type Renderer = Pick<ModelProfile, 'renderCompletion' | 'encodeText' | 'decode'>;

/** A call's rendering split around its arguments; undefined when the template does not allow it. */
function splitCall(profile: Renderer, name: string): { head: number[]; tail: number[] } | undefined {
  const dot = name.lastIndexOf('.');
  const entry = (args: string) =>
    profile.renderCompletion({
      kind: 'function_call',
      name: dot > 0 ? name.slice(dot + 1) : name,
      ...(dot > 0 ? { namespace: name.slice(0, dot) } : {}),
      arguments: args,
      callId: 'call_probe',
    });
  // Two renderings that differ only in their arguments: the arguments are a slot tokenized on its
  // own, so the tokens before it are the head and those after it the tail.
  const a = entry('0');
  const b = entry('1');
  let head = 0;
  while (head < a.length && a[head] === b[head]) head++;
  const args = profile.encodeText('0');
  if (args.length === 0 || args.some((t, i) => a[head + i] !== t)) return undefined;
  return { head: a.slice(0, head), tail: a.slice(head + args.length) };
}

/**
 * The framing of a call to one of `names` as `wrapper` writes it, or undefined when the template's
 * tokens do not spell the wrapper (a template other than the one the grammar follows).
 */
export function callFraming(
  profile: Renderer,
  names: readonly string[],
  wrapper: ToolCallWrapper,
): CallFraming | undefined {
  try {
    const splits = names.map((name) => ({ name, split: splitCall(profile, name) }));
    if (splits.some((s) => !s.split)) return undefined;
    for (const { name, split } of splits)
      if (profile.decode(split!.head) !== `${wrapper.beforeName}${JSON.stringify(name)}${wrapper.beforeArguments}`)
        return undefined;
    const [first, ...rest] = splits.map((s) => s.split!);
    let n = first.head.length;
    for (const s of rest) {
      let k = 0;
      while (k < n && k < s.head.length && s.head[k] === first.head[k]) k++;
      n = k;
    }
    const forced = first.head.slice(0, n);
    const forcedText = profile.decode(forced);
    const tailText = profile.decode(first.tail);
    if (!tailText.startsWith(wrapper.afterArguments)) return undefined;
    if (rest.some((s) => s.tail.length !== first.tail.length || s.tail.some((t, i) => t !== first.tail[i])))
      return undefined;
    const heads = splits.map(({ name }) => `${wrapper.beforeName}${JSON.stringify(name)}${wrapper.beforeArguments}`);
    if (!heads.every((h) => h.startsWith(forcedText))) return undefined;
    return { forced, forcedText, tail: first.tail };
  } catch {
    return undefined;
  }
}
