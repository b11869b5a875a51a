/**
 * Chat templates (Jinja source, as tokenizer_config.json carries them) for the stand-in chat LLM:
 * Qwen2.5's (ChatML with tools, the default), SmolLM2's (ChatML without tools) and Llama 3.1's
 * header format (not ChatML), so the engine's template detection is tested on each family.
 */
export type DecoderLlmChatTemplate = 'qwen2.5' | 'smollm2' | 'llama-3';

const QWEN25 = [
  '{%- if tools %}',
  "    {{- '<|im_start|>system\\n' }}",
  "    {%- if messages[0]['role'] == 'system' %}",
  "        {{- messages[0]['content'] }}",
  '    {%- else %}',
  "        {{- 'You are a helpful assistant.' }}",
  '    {%- endif %}',
  '    {{- "\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}',
  '    {%- for tool in tools %}',
  '        {{- "\\n" }}',
  '        {{- tool | tojson }}',
  '    {%- endfor %}',
  '    {{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}\\n</tool_call><|im_end|>\\n" }}',
  '{%- else %}',
  "    {%- if messages[0]['role'] == 'system' %}",
  "        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}",
  '    {%- else %}',
  "        {{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}",
  '    {%- endif %}',
  '{%- endif %}',
  '{%- for message in messages %}',
  '    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}',
  "        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}",
  '    {%- elif message.role == "assistant" %}',
  "        {{- '<|im_start|>' + message.role }}",
  '        {%- if message.content %}',
  "            {{- '\\n' + message.content }}",
  '        {%- endif %}',
  '        {%- for tool_call in message.tool_calls %}',
  '            {%- if tool_call.function is defined %}',
  '                {%- set tool_call = tool_call.function %}',
  '            {%- endif %}',
  '            {{- \'\\n<tool_call>\\n{"name": "\' }}',
  '            {{- tool_call.name }}',
  '            {{- \'", "arguments": \' }}',
  '            {{- tool_call.arguments | tojson }}',
  "            {{- '}\\n</tool_call>' }}",
  '        {%- endfor %}',
  "        {{- '<|im_end|>\\n' }}",
  '    {%- elif message.role == "tool" %}',
  '        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}',
  "            {{- '<|im_start|>user' }}",
  '        {%- endif %}',
  "        {{- '\\n<tool_response>\\n' }}",
  '        {{- message.content }}',
  "        {{- '\\n</tool_response>' }}",
  '        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}',
  "            {{- '<|im_end|>\\n' }}",
  '        {%- endif %}',
  '    {%- endif %}',
  '{%- endfor %}',
  '{%- if add_generation_prompt %}',
  "    {{- '<|im_start|>assistant\\n' }}",
  '{%- endif %}',
  '',
].join('\n');

const SMOLLM2 =
  "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\\n' }}{% endif %}" +
  "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

const LLAMA3 =
  "{{- bos_token }}{%- for message in messages %}{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}{%- endfor %}" +
  "{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}";

export const DECODER_LLM_CHAT_TEMPLATES: Record<DecoderLlmChatTemplate, string> = {
  'qwen2.5': QWEN25,
  smollm2: SMOLLM2,
  'llama-3': LLAMA3,
};
