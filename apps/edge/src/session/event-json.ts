import { randomUUID } from 'node:crypto';

// Stand in for a response's tools and instructions while the rest is serialized: unguessable, so
// no client text is ever taken for them.
const NONCE = randomUUID();
const TOOLS_MARK = `\u0000tools:${NONCE}`;
const INSTRUCTIONS_MARK = `\u0000instructions:${NONCE}`;
/** Each mark as it appears in the serialized text. */
const QUOTED = { [TOOLS_MARK]: JSON.stringify(TOOLS_MARK), [INSTRUCTIONS_MARK]: JSON.stringify(INSTRUCTIONS_MARK) };
/** Per request (its tools array, shared by every snapshot of its response): the JSON made for it. */
const madeFor = new WeakMap<object, { tools: string; instructions?: { text: string; json: string } }>();
/** The last instructions serialized for a response without tools. */
let lastInstructions: { text: string; json: string } | undefined;

/**
 * An event as JSON text, exactly as `JSON.stringify` writes it. The events that carry the Response
 * object (created, in_progress and the terminal one) each repeat the request's tools and
 * instructions, most of their bytes: their JSON is made once (the tools once per request, as every
 * snapshot of the response shares the request's array; the instructions while unchanged) and
 * spliced in. With bench/agent-loop's ten tools and 9.4 KB instructions, the three events of a turn
 * took 125–145 µs to serialize whole and ~33 µs so, plus the tools' once per request (a loaded machine).
 */
export function eventJson(event: object): string {
  const response = (event as { response?: { tools?: unknown; instructions?: unknown } }).response;
  if (!response) return JSON.stringify(event);
  const { tools, instructions } = response;
  const splices: [mark: string, json: string][] = [];
  const stand: { tools?: string; instructions?: string } = {};
  const made = Array.isArray(tools) && tools.length > 0 ? madeOf(tools) : undefined;
  if (made) {
    splices.push([TOOLS_MARK, made.tools]);
    stand.tools = TOOLS_MARK;
  }
  if (typeof instructions === 'string' && instructions.length > 256) {
    // Kept per request: a single shared entry thrashed with 100 agents' instructions interleaved.
    const last = made ? made.instructions : lastInstructions;
    const entry = last?.text === instructions ? last : { text: instructions, json: JSON.stringify(instructions) };
    if (made) made.instructions = entry;
    else lastInstructions = entry;
    splices.push([INSTRUCTIONS_MARK, entry.json]);
    stand.instructions = INSTRUCTIONS_MARK;
  }
  if (splices.length === 0) return JSON.stringify(event);
  // Overriding keys that exist keeps their places, so the text is the same but for the splices.
  const text = JSON.stringify({ ...event, response: { ...response, ...stand } });
  // The marks are found in the flat text and it is cut once: searching a text already spliced
  // flattened it, a copy of all of it (~20 KB with the agent loop's tools and instructions).
  const cuts = splices
    .map(([mark, json]) => ({ at: text.indexOf(QUOTED[mark]), length: QUOTED[mark].length, json }))
    .sort((x, y) => x.at - y.at);
  let out = '';
  let from = 0;
  for (const cut of cuts) {
    out += text.slice(from, cut.at) + cut.json;
    from = cut.at + cut.length;
  }
  return out + text.slice(from);
}

function madeOf(tools: object): { tools: string; instructions?: { text: string; json: string } } {
  let made = madeFor.get(tools);
  if (made === undefined) {
    made = { tools: JSON.stringify(tools) };
    madeFor.set(tools, made);
  }
  return made;
}
