import fc from 'fast-check';
import {
  getProfile,
  type ConversationEntry,
  type JsonSchema,
  type RenderHeader,
  type ToolSpec,
} from '@fastloop/model-profiles';
import { schemaProblems } from '@fastloop/test-kit';
import type { RequestConstraints } from '../../request-constraints';
import { completionToEntry, toolOutputFor } from '../../testing/completion-entry';
import { simulateCompletion } from './sim-engine';

// Harmony prompts do not carry tool_choice or text.format: the sim learns them from the request.
const profile = getProfile('harmony-o200k');
const tools: ToolSpec[] = [
  { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  {
    name: 'search',
    namespace: 'browser',
    parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  },
  { name: 'apply_patch', description: 'Edit files.', freeform: { type: 'text' } },
];
const header: RenderHeader = { tools };
const script = { toolCalls: 1, answerWords: 12 };
const user = (text: string): ConversationEntry => ({ kind: 'message', role: 'user', text });

function step(
  entries: ConversationEntry[],
  constraints?: RequestConstraints,
  h: RenderHeader = header,
): ConversationEntry {
  const tokens = simulateCompletion(profile, profile.render(h, entries), script, { constraints });
  return completionToEntry(profile, tokens, `call_${entries.length}`, h.tools);
}

/** A conversation where the unconstrained sim has used its tool calls and answers in text. */
function afterToolCall(text: string): ConversationEntry[] {
  const first = step([user(text)]);
  if (first.kind !== 'function_call' && first.kind !== 'custom_tool_call')
    throw new Error(`expected a call, got ${first.kind}`);
  return [user(text), first, toolOutputFor(first, 'ok')];
}

const callName = (e: ConversationEntry) =>
  e.kind === 'function_call' || e.kind === 'custom_tool_call'
    ? e.namespace
      ? `${e.namespace}.${e.name}`
      : e.name
    : `(${e.kind})`;

describe('the simulated model under request constraints', () => {
  it('with tool_choice required calls a tool where it would otherwise answer in text', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 30 }), (text) => {
        const conversation = afterToolCall(text);
        expect(step(conversation).kind).toBe('message');
        expect(['get_weather', 'browser.search', 'apply_patch']).toContain(
          callName(step(conversation, { toolChoice: 'required' })),
        );
      }),
      { numRuns: 30 },
    );
  });

  it('with a named function calls exactly that function, with arguments valid against its schema', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), fc.boolean(), (text, later) => {
        const conversation = later ? afterToolCall(text) : [user(text)];
        const entry = step(conversation, { toolChoice: { name: 'get_weather' } });
        expect(callName(entry)).toBe('get_weather');
        if (entry.kind === 'function_call')
          expect(schemaProblems(tools[0].parameters as JsonSchema, JSON.parse(entry.arguments))).toEqual([]);
      }),
      { numRuns: 30 },
    );
  });

  it('with a named namespace member or custom tool calls exactly that tool', () => {
    for (const text of ['hello', 'please search the web', 'edit a.txt']) {
      expect(callName(step([user(text)], { toolChoice: { name: 'browser.search' } }))).toBe('browser.search');
      const patch = step([user(text)], { toolChoice: { name: 'apply_patch' } });
      expect(patch.kind).toBe('custom_tool_call');
      expect(callName(patch)).toBe('apply_patch');
    }
  });

  it('with a strict json_schema format answers with JSON valid against the schema', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        city: { type: 'string' },
        days: { type: 'integer', minimum: 1, maximum: 7 },
        tags: { type: 'array', items: { type: 'string', enum: ['sun', 'rain'] } },
      },
      required: ['city', 'days', 'tags'],
      additionalProperties: false,
    };
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (text) => {
        const entry = step([user(text)], { responseFormat: { name: 'forecast', schema, strict: true } }, { tools: [] });
        if (entry.kind !== 'message') throw new Error(`expected a message, got ${entry.kind}`);
        expect(schemaProblems(schema, JSON.parse(entry.text))).toEqual([]);
      }),
      { numRuns: 30 },
    );
  });

  it('with json_object answers with a JSON object, after its tool calls', () => {
    const entry = step(afterToolCall('weather in Oslo'), {
      responseFormat: { name: 'json_object', schema: { type: 'object' }, strict: false },
    });
    if (entry.kind !== 'message') throw new Error(`expected a message, got ${entry.kind}`);
    expect(JSON.parse(entry.text)).toEqual({ answer: expect.stringContaining('Simulated answer after calling') });
  });

  it('ignores a named tool that is not offered, as with no constraint', () => {
    expect(step([user('hi')], { toolChoice: { name: 'nope' } })).toEqual(step([user('hi')]));
  });
});
