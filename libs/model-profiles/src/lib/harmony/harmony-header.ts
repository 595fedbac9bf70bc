import { HarmonyToken as T } from './harmony-tokens';

/** A message header taken apart: `{role}{ to=recipient}<|channel|>{channel}{ to=recipient} <|constrain|>{type}`. */
export interface HarmonyHeader {
  /** The author text before any ` to=` (empty when the role was already rendered, as after the generation prompt). */
  author: string;
  channel?: string;
  recipient?: string;
  contentType?: string;
}

const RECIPIENT = /(?:^|\s)to=(\S+)/;

/**
 * Parses the tokens between `<|start|>` (or the generation prompt) and `<|message|>`. harmony puts
 * the recipient after the role when it renders history and models put it after the channel, so
 * both places are read.
 */
export function parseHarmonyHeader(ids: readonly number[], decode: (ids: readonly number[]) => string): HarmonyHeader {
  const channelAt = ids.indexOf(T.channel);
  const constrainAt = ids.indexOf(T.constrain);
  const roleEnd = firstOf(channelAt, constrainAt, ids.length);
  const roleText = decode(ids.slice(0, roleEnd));
  const channelText =
    channelAt === -1 ? '' : decode(ids.slice(channelAt + 1, firstAfter(constrainAt, channelAt, ids.length)));
  const constrainText = constrainAt === -1 ? '' : decode(ids.slice(constrainAt + 1)).trim();

  const recipient = RECIPIENT.exec(roleText)?.[1] ?? RECIPIENT.exec(channelText)?.[1];
  const author = roleText.replace(RECIPIENT, '').trim();
  const words = channelText.split(/\s+/).filter((w) => w !== '' && !w.startsWith('to='));
  const header: HarmonyHeader = { author };
  if (words.length > 0) header.channel = words[0];
  if (recipient !== undefined) header.recipient = recipient;
  // `<|constrain|>json` is the rendered form; models also write a bare ` json` after the recipient.
  const contentType = constrainText || words[1];
  if (contentType) header.contentType = contentType;
  return header;
}

function firstOf(a: number, b: number, fallback: number): number {
  const found = [a, b].filter((i) => i !== -1);
  return found.length > 0 ? Math.min(...found) : fallback;
}

function firstAfter(candidate: number, after: number, fallback: number): number {
  return candidate > after ? candidate : fallback;
}
