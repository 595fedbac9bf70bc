import type { ResponseStreamEvent } from './stream-event-schema';

/**
 * Frames one event for Server-Sent Events: `event: <type>\ndata: <json>\n\n`, the event name
 * equal to the JSON `type`. One `data:` line is always enough: JSON.stringify escapes every
 * newline inside strings, so the payload never spans lines.
 */
export function formatSse(event: ResponseStreamEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
