import { DECODER_LLM_CHAT_TEMPLATES } from '@switchboard/testing';
import type { ChatMessage } from '../llm-engine';
import { detectChatTemplate } from './chat-template';
import { ChatMlPromptRenderer } from './chatml-prompt';
import { pythonJsonDumps } from './python-json';

const chatMlTokens = (token: string): boolean => ['<|im_start|>', '<|im_end|>'].includes(token);

describe('chat template detection', () => {
  it("recognises Qwen2.5's template (tools, default system prompt) and SmolLM2's (no tools)", () => {
    expect(detectChatTemplate('llm', DECODER_LLM_CHAT_TEMPLATES['qwen2.5'], chatMlTokens)).toEqual({
      family: 'chatml',
      supportsTools: true,
      defaultSystemPrompt: 'You are a helpful assistant.',
    });
    expect(detectChatTemplate('llm', DECODER_LLM_CHAT_TEMPLATES.smollm2, chatMlTokens)).toEqual({
      family: 'chatml',
      supportsTools: false,
      defaultSystemPrompt: 'You are a helpful AI assistant named SmolLM, trained by Hugging Face',
    });
  });

  it('refuses other families, a missing template, or ChatML text without the ChatML tokens', () => {
    expect(() => detectChatTemplate('llm', DECODER_LLM_CHAT_TEMPLATES['llama-3'], () => true)).toThrow(/Llama 3 chat template is not supported/);
    expect(() => detectChatTemplate('llm', '{{ "<start_of_turn>user" }}', () => true)).toThrow(/Gemma/);
    expect(() => detectChatTemplate('llm', undefined, () => true)).toThrow(expect.objectContaining({ code: 'bad_request', retryable: false }));
    expect(() => detectChatTemplate('llm', DECODER_LLM_CHAT_TEMPLATES.smollm2, () => false)).toThrow(/not supported/);
  });
});

describe('ChatMlPromptRenderer', () => {
  const qwen = new ChatMlPromptRenderer('llm', detectChatTemplate('llm', DECODER_LLM_CHAT_TEMPLATES['qwen2.5'], chatMlTokens));

  it('renders system, user and assistant turns, then the generation prompt', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'Bye' },
    ];
    expect(qwen.render(messages)).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n' +
        '<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it("inserts the template's default system prompt when the conversation has none", () => {
    expect(qwen.render([{ role: 'user', content: 'Hi' }])).toBe('<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
  });

  it('writes tool definitions as Python json.dumps lines inside <tools>', () => {
    const prompt = qwen.render([{ role: 'user', content: 'time?' }], [{ name: 'get_time', parameters: { type: 'object', properties: {} } }]);
    expect(prompt).toContain('<tools>\n{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}}\n</tools>');
    expect(prompt).toContain('<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n<|im_start|>user\ntime?');
  });

  it('groups consecutive tool results into one user turn', () => {
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

  it('refuses malformed conversations with bad_request', () => {
    expect(() => qwen.render([])).toThrow(/at least one message/);
    expect(() => qwen.render([{ role: 'narrator', content: 'x' } as unknown as ChatMessage])).toThrow(/unknown role/);
    expect(() => qwen.render([{ role: 'user', content: 42 } as unknown as ChatMessage])).toThrow(/content must be a string/);
  });
});

describe('pythonJsonDumps', () => {
  it("matches json.dumps(ensure_ascii=False): ', ' and ': ' separators, unicode kept, undefined dropped", () => {
    expect(pythonJsonDumps({ a: [1, 'é', null, true], b: { c: 'say "hi"\n' }, d: undefined })).toBe('{"a": [1, "é", null, true], "b": {"c": "say \\"hi\\"\\n"}}');
  });
});
