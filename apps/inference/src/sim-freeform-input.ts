import type { FreeformFormat } from '@fastloop/model-profiles';
import { createRandom, pickIndex } from '@fastloop/service-kit';

/** What a freeform input is derived from: deterministic for one conversation and call. */
export interface FreeformInputContext {
  seed: number;
  /** The user's request; its words name the file and fill the content. */
  text: string;
}

/**
 * The plain-text input the simulated model sends a custom (freeform) tool. A tool named
 * `apply_patch` (Codex's freeform editor) gets a well-formed patch that adds one new file, which a
 * real client can apply in an empty directory; any other tool gets a line of words. Grammars are
 * not interpreted: the simulator does not constrain sampling (documented in the README).
 */
export function freeformInput(name: string, format: FreeformFormat, ctx: FreeformInputContext): string {
  const words = contentWords(ctx);
  if (name === 'apply_patch' || (format.type === 'grammar' && format.definition.includes('*** Begin Patch'))) {
    const file = `sim-${(ctx.seed >>> 0).toString(16).padStart(8, '0')}.txt`;
    return ['*** Begin Patch', `*** Add File: ${file}`, `+${words.join(' ')}`, '*** End Patch', ''].join('\n');
  }
  return words.join(' ');
}

/** Up to eight words: the request's own, then filler picked by the seed. */
function contentWords(ctx: FreeformInputContext): string[] {
  const own = (ctx.text.match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 6);
  const filler = ['simulated', 'content', 'for', 'the', 'request'];
  const random = createRandom(ctx.seed);
  while (own.length < 8) own.push(filler[pickIndex(random, filler.length)]);
  return own;
}
