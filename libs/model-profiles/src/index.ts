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
  ParsedTool,
  RenderHeader,
  ToolSpec,
} from './lib/model-profile';
export {
  InvalidTokenError,
  ModelProfileError,
  type ModelProfileErrorCode,
  ProfileNotFoundError,
  PromptParseError,
  UnsupportedEntryError,
} from './lib/profile-errors';
export { DEFAULT_PROFILE_ID, getProfile, listProfileIds } from './lib/profile-registry';
export { HarmonyToken } from './lib/harmony/harmony-tokens';
