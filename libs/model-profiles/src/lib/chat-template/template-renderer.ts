// @huggingface/jinja ships a CommonJS build, but its types are declared for ESM only.
type Jinja = typeof import('@huggingface/jinja', { with: { 'resolution-mode': 'import' } });
const { Template } = require('@huggingface/jinja') as Jinja;
import type { TextTokenizer } from './text-tokenizer';

/** A message as chat templates expect it (the Hugging Face convention). */
export interface TemplateMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  name?: string;
  /** Set on the system message built from the request's instructions (see the default template). */
  fastloop_header?: boolean;
}

/** Everything a template is rendered with besides the messages. */
export interface TemplateOptions {
  tools?: unknown[];
  toolChoice?: unknown;
  responseFormat?: unknown;
  addGenerationPrompt: boolean;
}

/** Rendered text with the untrusted parts kept apart: `content[i]` sits where `markup` has slot i. */
export interface RenderedText {
  /** The template's output with each untrusted string replaced by a slot marker. */
  markup: string;
  content: string[];
}

// Private-use code points: no template writes them and they survive `| trim`, `| tojson` aside.
const SLOT_OPEN = '\u{F0000}';
const SLOT_CLOSE = '\u{F0001}';
const SLOT = /\u{F0000}(\d+)\u{F0001}/gu;

/**
 * Renders a Jinja chat template with @huggingface/jinja, then tokenizes it so that text from users
 * and tools can never become a special token: every message content (and call arguments) is
 * replaced by a slot before rendering; the template's own markup is tokenized with special tokens,
 * each slot's original text without.
 */
export class ChatTemplateRenderer {
  private readonly template: InstanceType<Jinja['Template']>;

  constructor(
    readonly source: string,
    private readonly tokenizer: TextTokenizer,
    private readonly specials: { bos_token: string; eos_token: string },
  ) {
    this.template = new Template(source);
  }

  /** Renders `messages` to text, untrusted strings left as slots. */
  renderText(messages: readonly TemplateMessage[], options: TemplateOptions): RenderedText {
    const content: string[] = [];
    const slot = (text: string) => `${SLOT_OPEN}${content.push(text) - 1}${SLOT_CLOSE}`;
    const slotted = messages.map((m) => ({
      ...m,
      content: slot(m.content),
      tool_calls: m.tool_calls?.map((c) => ({
        ...c,
        function: { name: c.function.name, arguments: slot(c.function.arguments) },
      })),
    }));
    const markup = this.template.render({
      messages: slotted,
      tools: options.tools && options.tools.length > 0 ? options.tools : undefined,
      tool_choice: options.toolChoice,
      response_format: options.responseFormat,
      add_generation_prompt: options.addGenerationPrompt,
      ...this.specials,
    });
    return { markup, content };
  }

  /** Tokens of `markup` (a whole rendering or a tail of one), slots filled from `content`. */
  tokenize(markup: string, content: readonly string[]): number[] {
    const out: number[] = [];
    let last = 0;
    for (const match of markup.matchAll(SLOT)) {
      this.pushMarkup(out, markup.slice(last, match.index));
      pushAll(out, this.tokenizer.encodeText(content[Number(match[1])] ?? ''));
      last = match.index + match[0].length;
    }
    this.pushMarkup(out, markup.slice(last));
    return out;
  }

  /**
   * Markup is tokenized line by line: message boundaries fall at line ends in chat templates, so
   * rendering entries one at a time gives the same tokens as rendering them all at once, even
   * where the markers are plain text (a BPE merge never spans a boundary).
   */
  private pushMarkup(out: number[], markup: string): void {
    for (const line of markup.split(/(?<=\n)/)) pushAll(out, this.tokenizer.encodeMarkup(line));
  }

  /** The text a model sees (slots filled), for prompt parsing and tests. */
  static fill(rendered: RenderedText): string {
    return rendered.markup.replace(SLOT, (_, i: string) => rendered.content[Number(i)] ?? '');
  }
}

function pushAll(out: number[], tokens: readonly number[]): void {
  for (const t of tokens) out.push(t);
}
