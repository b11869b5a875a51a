import { DECODER_LLM_CHAT_TEMPLATES } from '@switchboard/testing';
import type { ChatMessage, ToolDefinition } from '../llm-engine';
import { ModelChatTemplate } from './chat-template';
import type { ChatTemplateSource } from './llm-model-folder';
import { QWEN_TOOL_CALL_MARKUP } from './tool-call-stream-parser';

const QWEN_TOKENS = { eos_token: '<|im_end|>' };

function template(text: string, extra: Partial<ChatTemplateSource> = {}, tokens: { bos_token?: string; eos_token?: string } = QWEN_TOKENS): ModelChatTemplate {
  return ModelChatTemplate.load('llm', '/models/llm', { text, toolUseText: undefined, file: 'tokenizer_config.json', ...extra }, tokens);
}

const LOOKUP_ORDER: ToolDefinition = {
  name: 'lookup_order',
  description: 'Look up an order by its number',
  parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
};

describe("ModelChatTemplate on Qwen2.5-0.5B-Instruct's own template", () => {
  const qwen = template(DECODER_LLM_CHAT_TEMPLATES['qwen2.5']);

  it('learns from what the template emits that it renders tools and writes calls as <tool_call> JSON', () => {
    expect(qwen.rendersTools).toBe(true);
    expect(qwen.toolCallMarkup).toEqual(QWEN_TOOL_CALL_MARKUP);
  });

  it('renders a system + user + tool round exactly as the template writes it, tool definitions in <tools>', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are the Acme support line.' },
      { role: 'user', content: 'Where is order 4567?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup_order', arguments: '{"order_id":"4567"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"status":"shipped"}' },
    ];
    expect(qwen.render(messages, [LOOKUP_ORDER])).toBe(
      [
        '<|im_start|>system',
        'You are the Acme support line.',
        '',
        '# Tools',
        '',
        'You may call one or more functions to assist with the user query.',
        '',
        'You are provided with function signatures within <tools></tools> XML tags:',
        '<tools>',
        // tojson as Python's json.dumps writes it: ', ' and ': ' separators.
        '{"type": "function", "function": {"name": "lookup_order", "description": "Look up an order by its number", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}',
        '</tools>',
        '',
        'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:',
        '<tool_call>',
        '{"name": <function-name>, "arguments": <args-json-object>}',
        '</tool_call><|im_end|>',
        '<|im_start|>user',
        'Where is order 4567?<|im_end|>',
        '<|im_start|>assistant',
        '<tool_call>',
        // The wire's JSON text goes in as an object, so the template prints it as JSON, not a quoted string.
        '{"name": "lookup_order", "arguments": {"order_id": "4567"}}',
        '</tool_call><|im_end|>',
        '<|im_start|>user',
        '<tool_response>',
        '{"status":"shipped"}',
        '</tool_response><|im_end|>',
        '<|im_start|>assistant',
        '',
      ].join('\n'),
    );
  });

  it("inserts the template's own default system prompt, and renders plain turns without the tools block", () => {
    expect(qwen.render([{ role: 'user', content: 'Hi' }])).toBe(
      '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
    );
    const chat: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'Bye' },
    ];
    expect(qwen.render(chat)).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('groups consecutive tool results into one user turn and keeps arguments that are not a JSON object as text', () => {
    const prompt = qwen.render([
      { role: 'user', content: 'both' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'f', arguments: '{"x":1}' } },
          { id: 'b', type: 'function', function: { name: 'g', arguments: 'not json' } },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: 'one' },
      { role: 'tool', tool_call_id: 'b', content: 'two' },
    ]);
    expect(prompt).toContain(
      '<|im_start|>assistant\nChecking.\n<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>\n<tool_call>\n{"name": "g", "arguments": "not json"}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\none\n</tool_response>\n<tool_response>\ntwo\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it("prints a caller's text as data: template syntax in a message is never evaluated", () => {
    const text = "{{ raise_exception('x') }}{% for i in range(9) %}{{ i }}{% endfor %}";
    expect(qwen.render([{ role: 'user', content: text }])).toContain(`<|im_start|>user\n${text}<|im_end|>`);
  });

  it('refuses malformed conversations with non-retryable bad_request errors', () => {
    expect(() => qwen.render([])).toThrow(/at least one message/);
    expect(() => qwen.render([{ role: 'narrator', content: 'x' } as unknown as ChatMessage])).toThrow(/unknown role/);
    expect(() => qwen.render([{ role: 'user', content: 42 } as unknown as ChatMessage])).toThrow(/content must be a string/);
    expect(() => qwen.render([{ role: 'user', content: 'x' }], [{ name: 'bad name!', parameters: {} }])).toThrow(expect.objectContaining({ code: 'bad_request', retryable: false }));
  });
});

describe('ModelChatTemplate on other templates', () => {
  it("renders SmolLM2's ChatML with its default system prompt, and refuses tools it cannot render", () => {
    const smol = template(DECODER_LLM_CHAT_TEMPLATES.smollm2);
    expect(smol.render([{ role: 'user', content: 'hi' }])).toBe(
      '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(smol.rendersTools).toBe(false);
    expect(() => smol.render([{ role: 'user', content: 'hi' }], [LOOKUP_ORDER])).toThrow(/tools were given, but this model's chat template \(tokenizer_config.json\) has no tool support/);
    expect(() => smol.render([{ role: 'tool', tool_call_id: 'a', content: 'x' }])).toThrow(/message 0 is a tool call or result/);
  });

  it('renders a non-ChatML (Llama 3 header) template as written, bos_token included', () => {
    const llama = template(DECODER_LLM_CHAT_TEMPLATES['llama-3'], {}, { bos_token: '<|begin_of_text|>', eos_token: '<|eot_id|>' });
    expect(llama.render([{ role: 'user', content: ' hi ' }])).toBe(
      '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
    );
  });

  it('refuses tools when the template renders them but writes calls in a format the engine does not parse', () => {
    const mistralish = template(
      '{%- if tools %}[AVAILABLE_TOOLS]{{ tools | tojson }}[/AVAILABLE_TOOLS]{%- endif %}' +
        '{%- for m in messages %}{%- if m.tool_calls %}[TOOL_CALLS]{{ m.tool_calls | map(attribute="function") | list | tojson }}{%- else %}[INST]{{ m.content }}[/INST]{%- endif %}{%- endfor %}',
    );
    expect(mistralish.rendersTools).toBe(true);
    expect(mistralish.toolCallMarkup).toBeUndefined();
    expect(() => mistralish.render([{ role: 'user', content: 'hi' }], [LOOKUP_ORDER])).toThrow(/writes tool calls in a format the local engine does not parse/);
    expect(mistralish.render([{ role: 'user', content: 'hi' }])).toBe('[INST]hi[/INST]');
  });

  it("uses a named 'tool_use' template for chats with tools and 'default' for the rest, as transformers does", () => {
    const named = template('{% for m in messages %}plain:{{ m.content }}{% endfor %}', {
      toolUseText: DECODER_LLM_CHAT_TEMPLATES['qwen2.5'],
    });
    expect(named.render([{ role: 'user', content: 'hi' }])).toBe('plain:hi');
    expect(named.render([{ role: 'user', content: 'hi' }], [LOOKUP_ORDER])).toContain('<tools>\n{"type": "function", "function": {"name": "lookup_order"');
  });

  it("turns the template's raise_exception into a bad_request that quotes it", () => {
    const strict = template("{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{{ m.content }}{% endfor %}");
    expect(() => strict.render([{ role: 'system', content: 'x' }])).toThrow(
      expect.objectContaining({ code: 'bad_request', retryable: false, message: expect.stringMatching(/chat template \(tokenizer_config.json\) refused this conversation: System role not supported/) }),
    );
  });

  it('refuses a folder without a chat template, naming both places it looked, and a template that does not parse', () => {
    const missing = (): ModelChatTemplate => ModelChatTemplate.load('llm', '/models/base', undefined, {});
    expect(missing).toThrow(expect.objectContaining({ code: 'model_missing', retryable: false }));
    expect(missing).toThrow(/\/models\/base has no chat template \(no "chat_template" in tokenizer_config.json and no chat_template.jinja\)/);
    expect(() => template('{% if %}', { file: 'chat_template.jinja' })).toThrow(/the chat template in chat_template.jinja does not parse/);
  });
});
