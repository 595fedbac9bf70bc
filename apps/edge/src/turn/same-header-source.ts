import { jsonEqual } from '@fastloop/protocol';
import type { HeaderSource } from './render-header';

/**
 * Whether two requests' headers read the same: instructions, tools, tool_choice, reasoning effort
 * and text format equal as JSON (so render-header.ts `toHeader` gives equal headers, and safety equal header
 * items). Agents resend the same header every turn: compared once per turn with the previous
 * turn's (conversation-state.ts `headerSource`), the render and the verdict reuse the previous
 * header and its verdict instead of each comparing, reading or hashing the tools again.
 */
export function sameHeaderSource(a: HeaderSource, b: HeaderSource): boolean {
  return (
    a === b ||
    ((a.instructions ?? undefined) === (b.instructions ?? undefined) &&
      jsonEqual(a.tool_choice, b.tool_choice) &&
      jsonEqual(a.reasoning?.effort, b.reasoning?.effort) &&
      jsonEqual(a.text?.format, b.text?.format) &&
      jsonEqual(a.tools ?? [], b.tools ?? []))
  );
}
