import type { ConversationEntry, ModelProfile, OutputParser, ParsedPrompt, RenderHeader } from '../model-profile';
import { UnsupportedEntryError } from '../profile-errors';
import { DEFAULT_CHAT_TEMPLATE } from './default-chat-template';
import { entryMessage, headerMessages, headerOptions } from './entry-messages';
import { readTemplatePrompt } from './template-prompt-parser';
import { ChatTemplateRenderer, type RenderedText, type TemplateMessage } from './template-renderer';
import type { ModelFiles } from './text-tokenizer';
import { ToolCallOutputParser, toolCallFormatOf, type ToolCallFormat } from './tool-call-parser';

/** Options of {@link createChatTemplateProfile}. */
export interface ChatTemplateProfileOptions {
  id: string;
  files: ModelFiles;
  /** Overrides the file's template; the default template when neither exists. */
  template?: string;
  toolCalls?: ToolCallFormat;
}

// Entries are rendered after this message, so a template sees them where they would sit in a real
// conversation (not first) and the tail it adds is the entry alone.
const ANCHOR: readonly TemplateMessage[] = [
  { role: 'system', content: 'anchor' },
  { role: 'user', content: 'anchor' },
];
const NO_TOOLS = { tools: [], addGenerationPrompt: false };

/**
 * A profile built from a model's own files: its tokenizer, its chat template (GGUF metadata, else
 * {@link DEFAULT_CHAT_TEMPLATE}) rendered with @huggingface/jinja, tool calls parsed per family.
 * Entries are rendered as the tail the template adds for them; whether the template really is
 * append-stable is checked once on a probe conversation ({@link appendStable}).
 */
export function createChatTemplateProfile(
  options: ChatTemplateProfileOptions,
): ModelProfile & { readonly templateSource: string } {
  const { files } = options;
  const tok = files.tokenizer;
  const source = options.template ?? files.chatTemplate ?? DEFAULT_CHAT_TEMPLATE;
  const renderer = new ChatTemplateRenderer(source, tok, { bos_token: files.bosText, eos_token: files.eosText });
  const toolCalls = options.toolCalls ?? toolCallFormatOf(source);
  const anchor = renderer.renderText(ANCHOR, NO_TOOLS);
  const generationMarkup = tail(renderer.renderText(ANCHOR, { ...NO_TOOLS, addGenerationPrompt: true }), anchor.markup);
  const generationPrompt = renderer.tokenize(generationMarkup, []);
  const generationText = ChatTemplateRenderer.fill({ markup: generationMarkup, content: [] });

  const entryRendering = (e: ConversationEntry): RenderedText | undefined => {
    const message = entryMessage(e);
    if (!message) return undefined;
    const full = renderer.renderText([...ANCHOR, message], NO_TOOLS);
    return { markup: tail(full, anchor.markup), content: full.content };
  };

  const profile = {
    id: options.id,
    contextWindow: files.trainContextSize,
    maxOutputTokens: files.trainContextSize,
    vocabSize: tok.vocabSize,
    stopTokens: stopTokensOf(files, toolCalls),
    templateSource: source,
    appendStable: true,
    encodeText: (text: string) => tok.encodeText(text),
    decode: (tokens: readonly number[]) => tok.decode(tokens),
    renderHeader: (h: RenderHeader) => {
      const r = renderer.renderText(headerMessages(h), headerOptions(h, false));
      return renderer.tokenize(r.markup, r.content);
    },
    renderEntry: (e: ConversationEntry) => {
      const r = entryRendering(e);
      return r ? renderer.tokenize(r.markup, r.content) : [];
    },
    renderGenerationPrompt: () => [...generationPrompt],
    render: (h: RenderHeader, entries: readonly ConversationEntry[]) => {
      const messages = [
        ...headerMessages(h),
        ...entries.map(entryMessage).filter((m): m is TemplateMessage => m !== undefined),
      ];
      const r = renderer.renderText(messages, headerOptions(h, true));
      return renderer.tokenize(r.markup, r.content);
    },
    renderCompletion: (e: ConversationEntry) => {
      const r =
        (e.kind === 'message' && e.role === 'assistant') || e.kind === 'function_call' ? entryRendering(e) : undefined;
      if (!r || !r.markup.startsWith(generationMarkup))
        throw new UnsupportedEntryError(`cannot render a ${e.kind} entry as a completion`);
      return renderer.tokenize(r.markup.slice(generationMarkup.length), r.content);
    },
    createOutputParser: (): OutputParser => new ToolCallOutputParser(tok, toolCalls),
    parsePrompt: (tokens: readonly number[]): ParsedPrompt =>
      readTemplatePrompt((ids) => tok.decode(ids), tokens, generationText, toolCalls.endMarkers),
    warmUp: () => undefined,
  };
  profile.appendStable = isAppendStable(profile);
  return profile;
}

/** The part of `rendered` after `prefix`; a template that rewrites earlier text has no such part. */
function tail(rendered: RenderedText, prefix: string): string {
  if (!rendered.markup.startsWith(prefix))
    throw new UnsupportedEntryError('chat template is not append-stable: a later message changes earlier text');
  return rendered.markup.slice(prefix.length);
}

function stopTokensOf(files: ModelFiles, format: ToolCallFormat): number[] {
  const stops = new Set(files.tokenizer.stopTokens);
  for (const marker of format.endMarkers) {
    const ids = files.tokenizer.encodeMarkup(marker);
    // Only a marker that is one special token can stop sampling by id; longer ones end at text level.
    if (ids.length === 1 && files.tokenizer.encodeText(marker).length > 1) stops.add(ids[0]);
  }
  return [...stops];
}

/** Renders a probe conversation both ways: a template whose full render differs is not append-stable. */
function isAppendStable(
  p: Pick<ModelProfile, 'render' | 'renderHeader' | 'renderEntry' | 'renderGenerationPrompt'>,
): boolean {
  const header: RenderHeader = {
    instructions: 'Be brief.',
    tools: [{ name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } } }],
  };
  const entries: ConversationEntry[] = [
    { kind: 'message', role: 'user', text: 'Hi' },
    { kind: 'function_call', name: 'f', arguments: '{"a":"x"}', callId: 'c1' },
    { kind: 'function_call_output', name: 'f', output: 'ok', callId: 'c1' },
    { kind: 'message', role: 'assistant', text: 'Done.' },
    { kind: 'message', role: 'user', text: 'Thanks' },
  ];
  try {
    const parts = [
      ...p.renderHeader(header),
      ...entries.flatMap((e) => p.renderEntry(e)),
      ...p.renderGenerationPrompt(),
    ];
    const full = p.render(header, entries);
    return parts.length === full.length && parts.every((t, i) => t === full[i]);
  } catch {
    return false;
  }
}
