/**
 * `@fastloop/protocol`: the one home of the external wire contract, the OpenAI Responses API
 * as fastloop speaks it over HTTP+SSE and WebSocket. Inbound schemas read loosely; outbound
 * builders produce closed types. Imports nothing internal.
 */

// Ids.
export { newId, type IdPrefix } from './lib/new-id';

// Errors.
export {
  ApiError,
  ApiErrors,
  asApiError,
  describeId,
  toHttpErrorBody,
  toResponseError,
  toWsErrorEvent,
  type ApiErrorInit,
} from './lib/api-error';
export {
  ApiErrorCodeSchema,
  ApiErrorTypeSchema,
  ErrorObjectSchema,
  HttpErrorBodySchema,
  ResponseErrorSchema,
  WsErrorFrameSchema,
  type ApiErrorCode,
  type ApiErrorCodeLike,
  type ApiErrorType,
  type ErrorObject,
  type HttpErrorBody,
  type ResponseError,
  type WsErrorFrame,
} from './lib/error-schemas';

// Inbound: request bodies, items, tools.
export {
  ContentPartSchema,
  CompactionItemSchema,
  CustomToolCallItemSchema,
  CustomToolCallOutputItemSchema,
  FunctionCallItemSchema,
  FunctionCallOutputItemSchema,
  InputFilePartSchema,
  InputImagePartSchema,
  InputItemSchema,
  InputTextPartSchema,
  ItemReferenceSchema,
  LocalShellCallItemSchema,
  LocalShellCallOutputItemSchema,
  MessageItemSchema,
  OutputTextPartSchema,
  ReasoningItemSchema,
  RefusalPartSchema,
  isKnownInputItem,
  type CarriedInputItem,
  type CompactionItem,
  type ContentPart,
  type CustomToolCallItem,
  type CustomToolCallOutputItem,
  type FunctionCallItem,
  type FunctionCallOutputItem,
  type InputItem,
  type ItemReference,
  type KnownInputItem,
  type LocalShellCallItem,
  type LocalShellCallOutputItem,
  type MessageItem,
  type ReasoningItem,
} from './lib/input-item-schema';
export {
  CustomToolFormatSchema,
  CustomToolSchema,
  FunctionToolChoiceSchema,
  FunctionToolSchema,
  NamespaceToolSchema,
  ToolChoiceSchema,
  ToolSchema,
  LocalShellToolSchema,
  isKnownTool,
  type CustomTool,
  type FunctionTool,
  type KnownTool,
  type NamespaceMember,
  type NamespaceTool,
  type Tool,
  type ToolChoice,
} from './lib/tool-schema';
export {
  ContextManagementSchema,
  JsonSchemaFormatSchema,
  METADATA_LIMITS,
  MetadataSchema,
  ReasoningConfigSchema,
  ReasoningEffortSchema,
  ReasoningSummarySchema,
  ResponseCreateEventSchema,
  ResponseCreateRequestSchema,
  TextConfigSchema,
  TextFormatSchema,
  VerbositySchema,
  type ContextManagement,
  type ReasoningConfig,
  type ReasoningEffort,
  type ResponseCreateEvent,
  type ResponseCreateRequest,
  type TextConfig,
  type TextFormat,
} from './lib/response-create-request-schema';
export {
  parseClientEvent,
  parseClientFrame,
  validateItems,
  validateRequest,
  type ValidatedTools,
  type ClientEvent,
} from './lib/validate-request';
export { jsonEqual } from './lib/json-equal';
export {
  checkStreamId,
  CLIENT_EVENT_TYPES,
  ResponseInterruptEventSchema,
  ResponseProcessedEventSchema,
  ResponseSteerEventSchema,
  STREAM_ID_PATTERN,
  type ControlEvent,
  type ResponseInterruptEvent,
  type ResponseProcessedEvent,
  type ResponseSteerEvent,
} from './lib/ws-client-events';
export { formatParam, issueToApiError } from './lib/issue-to-api-error';
export { checkRequestLimits, DEFAULT_REQUEST_LIMITS, type RequestLimits } from './lib/request-limits';
export {
  ENFORCED_SCHEMA_KEYWORDS,
  MAX_SCHEMA_REPETITION,
  resolveRef,
  strictSchemaProblems,
  typesOf,
  type StrictSchemaProblem,
} from './lib/strict-schema';
export { checkStrictSchemas } from './lib/strict-request-schemas';

// Outbound: the Response object and its items.
export {
  CompactedResponseSchema,
  CompactedUserMessageSchema,
  LocalShellActionSchema,
  OutputCompactionSchema,
  OutputCustomToolCallSchema,
  OutputFunctionCallSchema,
  OutputLocalShellCallSchema,
  OutputItemSchema,
  OutputItemStatusSchema,
  OutputMessageSchema,
  OutputReasoningSchema,
  OutputTextSchema,
  ReasoningTextSchema,
  ResponseObjectSchema,
  ResponseStatusSchema,
  UsageSchema,
  type CompactedResponse,
  type CompactedUserMessage,
  type LocalShellAction,
  type OutputCompaction,
  type OutputCustomToolCall,
  type OutputFunctionCall,
  type OutputLocalShellCall,
  type OutputItem,
  type OutputItemStatus,
  type OutputMessage,
  type OutputReasoning,
  type OutputText,
  type ReasoningText,
  type ResponseObject,
  type ResponseStatus,
  type Usage,
} from './lib/response-object-schema';
export {
  createResponseObject,
  createUsage,
  type ResponseObjectOptions,
  type UsageCounts,
} from './lib/create-response-object';

// Outbound: streaming.
export {
  ResponseStreamEventSchema,
  type ResponseStreamEvent,
  type StreamContentPart,
  type StreamEventOf,
  type TerminalEvent,
  TIMING_HEADER,
  WebSocketTimingEventSchema,
  type WebSocketTimingEvent,
} from './lib/stream-event-schema';
export { EventStream, type ItemPosition, type PartPosition } from './lib/event-stream';
export {
  OutputAssembler,
  type EndItemOptions,
  type OutputEventSink,
  type StartedFunctionCall,
} from './lib/output-assembler';
export { formatSse } from './lib/format-sse';
export * from './lib/usage-list-schema';
