import type { Rule } from './rule';

const S = '\\s{1,3}';
// Between the words of a fixed phrase: none too, since a zero-width space standing for the space is
// dropped from the view (normalise.ts) though a model still reads two words.
const W = '\\s{0,3}';

/** An injection signal: case-insensitive, scored by `weight` points (threshold in the policy). */
function signal(
  id: string,
  description: string,
  keywords: string[],
  source: string,
  window: number,
  weight: number,
  ignoreCase = true,
  raw = false,
): Rule {
  return {
    id,
    category: 'injection',
    description,
    keywords,
    pattern: new RegExp(source, ignoreCase ? 'gi' : 'g'),
    window,
    weight,
    ...(raw ? { raw } : {}),
  };
}

/**
 * Prompt-injection signals, applied to what tools return and to tool definitions (text the model
 * reads but neither the user nor the developer wrote). Each match adds its weight to the stream's
 * score; a stream is flagged when its score reaches the threshold, so one weak cue ("system
 * prompt" in a README) is not a finding but several together, or one strong cue, are.
 */
export const INJECTION_RULES: readonly Rule[] = [
  signal(
    'injection-ignore-instructions',
    'an attempt to override earlier instructions',
    ['ignore'],
    `ignore${W}(?:all${W}|any${W})?(?:of${W})?(?:the${W}|your${W}|my${W})?(?:previous|prior|above|earlier|preceding|system|original)${W}(?:instructions|prompts?|rules|directions|messages|guidelines)`,
    96,
    6,
  ),
  signal(
    'injection-disregard-instructions',
    'an attempt to make the model forget its instructions',
    ['disregard', 'forget', 'override'],
    `(?:disregard|forget|override)${W}(?:all${W}|any${W})?(?:the${W}|your${W}|my${W})?(?:previous${W}|prior${W}|above${W}|system${W}|original${W})?(?:instructions|prompt|rules|guidelines|directives)`,
    90,
    5,
  ),
  signal(
    'injection-new-instructions',
    'text posing as new instructions',
    ['instructions'],
    `(?:new|updated|real|actual|important|urgent)${S}(?:system${S})?instructions${'\\s{0,3}'}:`,
    48,
    4,
  ),
  signal(
    'injection-role-hijack',
    'an attempt to give the model a new role',
    ['you are now', 'act as', 'pretend'],
    `(?:you${W}are${W}now|from${W}now${W}on${W}you${W}are|pretend${W}(?:to${W}be|you${W}are)|act${W}as${W}(?:an?${W})?(?:unrestricted|jailbroken|dan|developer${W}mode))`,
    60,
    3,
  ),
  // Chat-template control tokens have no business in a tool's output: they try to open a new turn.
  signal(
    'injection-chat-markers',
    'chat-template control tokens',
    ['<|', '[inst]', '<<sys>>', '[/inst]'],
    '<\\|(?:im_start|im_end|system|start|end|start_header_id|eot_id|channel|message)\\|>|\\[/?INST\\]|<<SYS>>',
    18,
    5,
  ),
  signal(
    'injection-reveal-prompt',
    'a request to reveal the system prompt',
    ['prompt', 'instructions'],
    `(?:reveal|print|show|repeat|output|leak|disclose)${S}(?:your${S}|the${S}|all${S})?(?:system${S}prompt|hidden${S}prompt|initial${S}instructions|system${S}instructions)`,
    72,
    4,
  ),
  signal(
    'injection-exfiltration',
    'a request to send data to an outside address',
    ['send', 'post', 'upload', 'forward', 'exfiltrate', 'transmit', 'email', 'leak'],
    `(?:send|post|upload|forward|exfiltrate|transmit|email|leak)${S}(?:[\\w.-]{1,24}${S}){0,4}?to${S}(?:https?://|[\\w.-]{1,64}@|the${S}(?:following|attacker|url|endpoint|address))`,
    196,
    5,
  ),
  // Data smuggled out through an image URL the client renders: ![x](https://evil/?q=<data>).
  signal(
    'injection-markdown-exfiltration',
    'a markdown image that carries data in its URL',
    ['!['],
    '!\\[[^\\]\\n]{0,48}\\]\\(https?://[^\\s)]{1,120}[?&][\\w-]{1,20}=',
    200,
    4,
  ),
  // Hidden text: invisible to a reviewer, read by the model.
  signal(
    'hidden-tag-characters',
    'hidden Unicode tag characters (ASCII smuggling)',
    [],
    '(?:\\uDB40[\\uDC00-\\uDC7F]){2}',
    4,
    10,
    false,
    true,
  ),
  signal(
    'hidden-bidi-control',
    'a bidirectional-text control character',
    [],
    '[\\u202A-\\u202E\\u2066-\\u2069]',
    1,
    4,
    false,
    true,
  ),
  signal(
    'hidden-zero-width',
    'a run of zero-width characters',
    [],
    '[\\u200B\\u200C\\u200D\\u2060\\uFEFF]{3}',
    3,
    4,
    false,
    true,
  ),
];
