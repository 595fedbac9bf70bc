/**
 * `@fastloop/model-profiles/testing`: fast-check generators of headers (instructions, tools with
 * schemas) and conversation entries, for property tests in this library and in the apps that render
 * with it. Test code only.
 */
export {
  anyText,
  assistantEntry,
  canonicalSchema,
  conversationEntry,
  renderHeader,
  toolSpec,
  toolSpecs,
} from './lib/testing/conversation-arbitraries';
