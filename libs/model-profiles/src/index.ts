/**
 * `@fastloop/model-profiles`: tokenizers, chat formats (render conversations to tokens, parse
 * sampled tokens to output items) and model limits.
 */
export type { JsonLiteral, JsonSchema, JsonSchemaTypeName } from './lib/json-schema';
export type {
  ConversationEntry,
  FreeformFormat,
  ModelProfile,
  OutputParser,
  ParseEvent,
  ParsedPrompt,
  ParsedPromptMessage,
  PromptReader,
  ParsedTool,
  RenderHeader,
  RenderLimits,
  ToolSpec,
} from './lib/model-profile';
export {
  InvalidTokenError,
  ModelProfileError,
  type ModelProfileErrorCode,
  ProfileNotFoundError,
  PromptParseError,
  RenderDeadlineError,
  RenderLimitError,
  type RenderLimitName,
  TokenBudgetExceededError,
  UnsupportedEntryError,
} from './lib/profile-errors';
export {
  DEFAULT_PROFILE_ID,
  GGUF_PROFILE_PREFIX,
  getProfile,
  ggufProfileId,
  listProfileIds,
  resolveProfile,
} from './lib/profile-registry';
export { createChatTemplateProfile, type ChatTemplateProfileOptions } from './lib/chat-template/chat-template-profile';
export { DEFAULT_CHAT_TEMPLATE } from './lib/chat-template/default-chat-template';
export { loadGgufModelFiles, ModelFileError } from './lib/chat-template/gguf-model-files';
export { loadNodeLlamaCpp, type NodeLlamaCpp } from './lib/chat-template/node-llama-cpp-module';
export type { ModelFiles, TextTokenizer } from './lib/chat-template/text-tokenizer';
export {
  HERMES_FORMAT,
  LLAMA3_JSON_FORMAT,
  toolCallFormatOf,
  type ToolCallFormat,
} from './lib/chat-template/tool-call-parser';
export { entryText } from './lib/entry-text';
export { HarmonyToken } from './lib/harmony/harmony-tokens';
export {
  reviveProfileError,
  runRenderTask,
  type RemoteProfileError,
  type RenderTask,
  type RenderTaskResult,
} from './lib/render-task';
export {
  GUARD_ANSWER_INSTRUCTION,
  GUARD_RESPONSE_FORMAT,
  GUARD_VERDICTS,
  guardHeader,
  isGuardPrompt,
  readGuardVerdict,
  type GuardVerdictWord,
} from './lib/guard-verdict';
