/**
 * The template used when a model ships none (stories260K): ChatML turns with Hermes-style tools,
 * which is also what Qwen and Hermes models are trained on. The header's system message is
 * marked (`fastloop_header`) so that a system message later in the conversation renders as its
 * own turn, as it does when entries are rendered one at a time. Besides the tools it writes the
 * request's tool choice and response format into the system block, between tags the engine reads
 * back (`parsePrompt`) to constrain sampling with a grammar.
 */
// Written for Hugging Face's rendering rules (trim_blocks, lstrip_blocks): the newline after a
// block tag is dropped, so every newline the model should see follows text, never a tag.
export const DEFAULT_CHAT_TEMPLATE = `{{- bos_token }}
{%- if (messages | length > 0 and messages[0].fastloop_header) or tools or tool_choice or response_format %}<|im_start|>system
{% if messages | length > 0 and messages[0].fastloop_header %}{{ messages[0].content }}
{% endif %}{% if tools %}<tools>
{% for tool in tools %}{{ tool | tojson }}
{% endfor %}</tools>
For a function call return <tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call>
{% endif %}{% if tool_choice %}<tool_choice>{{ tool_choice | tojson }}</tool_choice>
{% endif %}{% if response_format %}<response_format>{{ response_format | tojson }}</response_format>
{% endif %}<|im_end|>
{% endif %}
{%- for message in messages %}{% if message.fastloop_header %}{% elif message.role == 'tool' %}<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% elif message.role == 'assistant' and message.tool_calls %}<|im_start|>assistant
{% for call in message.tool_calls %}<tool_call>
{"name": {{ call.function.name | tojson }}, "arguments": {{ call.function.arguments }}}
</tool_call>
{% endfor %}<|im_end|>
{% else %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endif %}{% endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}`;
