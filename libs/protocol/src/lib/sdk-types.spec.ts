// Checks our wire shapes against the official SDK's types, the authority on field names.
// Most of the work happens at compile time (`tsc --noEmit` covers spec files); the runtime
// parts feed SDK-typed values through our parsers.
import type * as SDK from 'openai/resources/responses/responses';
import { EventStream } from './event-stream';
import { OutputAssembler } from './output-assembler';
import type { OutputItem, ResponseObject, Usage } from './response-object-schema';
import type { ResponseStreamEvent, StreamEventOf } from './stream-event-schema';
import { parseClientEvent, validateItems, validateRequest } from './validate-request';
import { ApiError } from './api-error';

/** Compiles only when T is assignable to U. */
type Assignable<T extends U, U> = T;

type LifecycleEvent = StreamEventOf<
  'response.created' | 'response.in_progress' | 'response.completed' | 'response.failed' | 'response.incomplete'
>;

// Every non-lifecycle event is a valid SDK ResponseStreamEvent, member for member.
export type EventsMatchSdk = Assignable<Exclude<ResponseStreamEvent, LifecycleEvent>, SDK.ResponseStreamEvent>;
export type ItemsMatchSdk = Assignable<OutputItem, SDK.ResponseOutputItem>;
export type UsageMatchesSdk = Assignable<
  Usage & { input_tokens_details: { cache_write_tokens: number } },
  SDK.ResponseUsage
>;

// The Response object matches the SDK's on every field whose type we can state as narrowly.
// Left out on purpose: `tools`/`tool_choice` (carried loosely, any tool type), `error` (our
// codes are open strings), `usage`/`user` (OpenAI sends null; the SDK types omit null), `store`
// (sent by OpenAI, absent from the SDK type), `output_text` (computed by the SDK itself) and
// `incomplete_details`, checked below apart from the WebSocket-only reasons `interrupted` (Codex's
// `response.interrupt`) and `steered` (`response.steer`), which this SDK's type does not list yet.
type CheckedResponseKeys = Exclude<
  keyof ResponseObject,
  'tools' | 'tool_choice' | 'error' | 'usage' | 'user' | 'store' | 'incomplete_details'
>;
type HttpIncompleteDetails = {
  reason: Exclude<NonNullable<ResponseObject['incomplete_details']>['reason'], 'interrupted' | 'steered'>;
};
export type IncompleteDetailsMatchSdk = Assignable<HttpIncompleteDetails, SDK.Response.IncompleteDetails>;
export type ResponseMatchesSdk = Assignable<
  Pick<ResponseObject, CheckedResponseKeys>,
  Pick<SDK.Response, CheckedResponseKeys>
>;

describe('SDK compatibility', () => {
  it('accepts a request typed as the SDK ResponseCreateParams', () => {
    const body: SDK.ResponseCreateParamsStreaming = {
      model: 'gpt-oss-120b',
      stream: true,
      store: false,
      instructions: 'Be brief.',
      include: ['reasoning.encrypted_content'],
      reasoning: { effort: 'high', summary: 'auto' },
      text: {
        verbosity: 'low',
        format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true },
      },
      prompt_cache_key: 'k',
      tool_choice: { type: 'function', name: 'f' },
      tools: [
        { type: 'function', name: 'f', parameters: { type: 'object' }, strict: true },
        { type: 'namespace', name: 'ns', description: 'd', tools: [{ type: 'function', name: 'g' }] },
        { type: 'custom', name: 'apply_patch' },
        { type: 'custom', name: 'grep', format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' } },
        { type: 'local_shell' },
        { type: 'web_search' },
        { type: 'file_search', vector_store_ids: ['vs_1'] },
        { type: 'mcp', server_label: 'srv', server_url: 'https://example.com/mcp' },
        { type: 'code_interpreter', container: 'auto' },
        { type: 'image_generation' },
      ],
      input: [
        { role: 'developer', content: 'rules' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'hi' },
            { type: 'input_image', detail: 'auto', image_url: 'data:,' },
          ],
        },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'x' },
        { type: 'function_call', call_id: 'call_1', name: 'g', namespace: 'ns', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_text', text: 'ok' }] },
        { type: 'item_reference', id: 'msg_1' },
      ],
    };
    expect(() => validateRequest(body)).not.toThrow();
  });

  it('accepts every input item type of the SDK, hosted-tool items included', () => {
    const items: SDK.ResponseInputItem[] = [
      { role: 'user', content: 'easy' },
      { type: 'message', role: 'system', content: [{ type: 'input_text', text: 's' }] },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_file', file_data: 'data:text/plain;base64,aGk=', filename: 'a.txt' },
          { type: 'input_image', detail: 'high', file_id: 'file_1' },
        ],
      },
      {
        type: 'message',
        id: 'msg_1',
        role: 'assistant',
        status: 'completed',
        content: [
          { type: 'output_text', text: 'a', annotations: [] },
          { type: 'refusal', refusal: 'no' },
        ],
      },
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [{ type: 'summary_text', text: 's' }],
        content: [{ type: 'reasoning_text', text: 'r' }],
      },
      { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_file', file_id: 'file_2' }] },
      { type: 'custom_tool_call', call_id: 'call_2', name: 'apply_patch', input: '*** Begin Patch' },
      { type: 'custom_tool_call_output', call_id: 'call_2', output: 'Done!' },
      {
        type: 'local_shell_call',
        id: 'lsh_1',
        call_id: 'call_3',
        status: 'completed',
        action: { type: 'exec', command: ['ls'], env: {} },
      },
      { type: 'local_shell_call_output', id: 'call_3', output: 'a.txt' },
      { type: 'item_reference', id: 'msg_1' },
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } },
      { type: 'file_search_call', id: 'fs_1', status: 'completed', queries: ['q'], results: null },
      {
        type: 'computer_call',
        id: 'cu_1',
        call_id: 'call_4',
        status: 'completed',
        pending_safety_checks: [],
        action: { type: 'click', button: 'left', x: 1, y: 2 },
      },
      { type: 'computer_call_output', call_id: 'call_4', output: { type: 'computer_screenshot', image_url: 'data:,' } },
      { type: 'image_generation_call', id: 'ig_1', status: 'completed', result: null },
      {
        type: 'code_interpreter_call',
        id: 'ci_1',
        status: 'completed',
        code: 'print(1)',
        container_id: 'c',
        outputs: null,
      },
      { type: 'mcp_list_tools', id: 'ml_1', server_label: 'srv', tools: [{ name: 't', input_schema: {} }] },
      { type: 'mcp_approval_request', id: 'mr_1', server_label: 'srv', name: 't', arguments: '{}' },
      { type: 'mcp_approval_response', approval_request_id: 'mr_1', approve: true },
      { type: 'mcp_call', id: 'mc_1', server_label: 'srv', name: 't', arguments: '{}', output: 'ok' },
    ];
    expect(validateItems(items)).toHaveLength(items.length);
  });

  it('accepts a WebSocket event typed as the SDK ResponsesClientEvent', () => {
    const event: SDK.ResponsesClientEvent = {
      type: 'response.create',
      model: 'm',
      previous_response_id: 'resp_1',
      input: [],
    };
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
    assembler.startCustomToolCall('apply_patch');
    assembler.appendInput('*** Begin Patch');
    assembler.addLocalShellCall({ type: 'exec', command: ['ls'], env: {} });
    assembler.finish();
    expect(sent).toHaveLength(22);
  });
});
