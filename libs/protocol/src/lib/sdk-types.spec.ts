// Checks our wire shapes against the official SDK's types, the authority on field names.
// Most of the work happens at compile time (`tsc --noEmit` covers spec files); the runtime
// parts feed SDK-typed values through our parsers.
import type * as SDK from 'openai/resources/responses/responses';
import { EventStream } from './event-stream';
import { OutputAssembler } from './output-assembler';
import type { OutputItem, ResponseObject, Usage } from './response-object-schema';
import type { ResponseStreamEvent, StreamEventOf } from './stream-event-schema';
import { parseClientEvent, validateRequest } from './validate-request';
import { ApiError } from './api-error';

/** Compiles only when T is assignable to U. */
type Assignable<T extends U, U> = T;

type LifecycleEvent = StreamEventOf<
  'response.created' | 'response.in_progress' | 'response.completed' | 'response.failed' | 'response.incomplete'
>;

// Every non-lifecycle event is a valid SDK ResponseStreamEvent, member for member.
export type EventsMatchSdk = Assignable<Exclude<ResponseStreamEvent, LifecycleEvent>, SDK.ResponseStreamEvent>;
export type ItemsMatchSdk = Assignable<OutputItem, SDK.ResponseOutputItem>;
export type UsageMatchesSdk = Assignable<Usage & { input_tokens_details: { cache_write_tokens: number } }, SDK.ResponseUsage>;

// The Response object matches the SDK's on every field whose type we can state as narrowly.
// Left out on purpose: `tools`/`tool_choice` (carried loosely, any tool type), `error` (our
// codes are open strings), `usage`/`user` (OpenAI sends null; the SDK types omit null), `store`
// (sent by OpenAI, absent from the SDK type) and `output_text` (computed by the SDK itself).
type CheckedResponseKeys = Exclude<keyof ResponseObject, 'tools' | 'tool_choice' | 'error' | 'usage' | 'user' | 'store'>;
export type ResponseMatchesSdk = Assignable<Pick<ResponseObject, CheckedResponseKeys>, Pick<SDK.Response, CheckedResponseKeys>>;

describe('SDK compatibility', () => {
  it('accepts a request typed as the SDK ResponseCreateParams', () => {
    const body: SDK.ResponseCreateParamsStreaming = {
      model: 'gpt-oss-120b',
      stream: true,
      store: false,
      instructions: 'Be brief.',
      include: ['reasoning.encrypted_content'],
      reasoning: { effort: 'high', summary: 'auto' },
      text: { verbosity: 'low', format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
      prompt_cache_key: 'k',
      tool_choice: { type: 'function', name: 'f' },
      tools: [
        { type: 'function', name: 'f', parameters: { type: 'object' }, strict: true },
        { type: 'namespace', name: 'ns', description: 'd', tools: [{ type: 'function', name: 'g' }] },
        { type: 'custom', name: 'apply_patch' },
      ],
      input: [
        { role: 'developer', content: 'rules' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }, { type: 'input_image', detail: 'auto', image_url: 'data:,' }] },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'x' },
        { type: 'function_call', call_id: 'call_1', name: 'g', namespace: 'ns', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_text', text: 'ok' }] },
        { type: 'item_reference', id: 'msg_1' },
      ],
    };
    expect(() => validateRequest(body)).not.toThrow();
  });

  it('accepts a WebSocket event typed as the SDK ResponsesClientEvent', () => {
    const event: SDK.ResponsesClientEvent = { type: 'response.create', model: 'm', previous_response_id: 'resp_1', input: [] };
    expect(parseClientEvent(event)).not.toBeInstanceOf(ApiError);
  });

  it('produces events the SDK types accept', () => {
    const sent: SDK.ResponseStreamEvent[] = [];
    const assembler = new OutputAssembler(new EventStream(), (event) => {
      // No cast: once lifecycle events are narrowed away, ours must already be SDK events.
      if (!('response' in event)) sent.push(event);
    });
    assembler.startReasoning();
    assembler.appendReasoning('hm');
    assembler.startMessage();
    assembler.appendText('hi');
    assembler.startFunctionCall('f');
    assembler.appendArguments('{}');
    assembler.finish();
    expect(sent).toHaveLength(16);
  });
});
